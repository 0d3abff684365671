"""Helpers for testing other software against mockbroker (mockbroker.testing.spark: Spark's Kafka source)."""
