"""The README's first test: a producer writes one keyed record, and the test reads what the broker stored.

It needs only `pip install mockbroker confluent-kafka pytest`: installing mockbroker registers its pytest
plugin, which gives the `mockbroker` fixture (a fresh broker per test, in its own thread). scripts/release
runs this file against each built package in a fresh virtualenv; tests/test_packaging.py runs it against
the working tree.
"""

from confluent_kafka import Producer


def test_producer_writes_keyed_records(mockbroker):
    mockbroker.create_topic("orders", partitions=3)
    producer = Producer({"bootstrap.servers": mockbroker.bootstrap_servers, "enable.idempotence": True})
    producer.produce("orders", key=b"42", value=b"{}", partition=1)
    assert producer.flush(10) == 0  # nothing left unsent

    [record] = mockbroker.records("orders")
    assert (record.partition, record.offset, record.key, record.value) == (1, 0, b"42", b"{}")
    [batch] = mockbroker.batches("orders", partition=1)
    assert batch.producer_id >= 0 and batch.base_sequence == 0  # an idempotent producer
