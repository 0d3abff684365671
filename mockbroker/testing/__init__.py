"""Helpers for testing other software against mockbroker: mockbroker.testing.spark (Spark's Kafka source and
sink), mockbroker.testing.delivery (lost, duplicated, reordered, aborted-read and committed-ahead checks)."""
