"""Kafka's wire protocol, sans-IO: primitives, generated message codecs, headers, framing, record batches.

Never imports asyncio or socket (tests/protocol/test_sans_io.py enforces it).
"""
