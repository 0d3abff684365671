import asyncio

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer


@pytest.mark.asyncio   # not needed with asyncio_mode = "auto"
async def test_a_consumer_group_reads_and_commits(mockbroker):
    mockbroker.create_topic("orders", partitions=2)
    producer = AIOKafkaProducer(bootstrap_servers=mockbroker.bootstrap_servers)
    await producer.start()
    try:
        await producer.send_and_wait("orders", b"hello", key=b"k", partition=1)
    finally:
        await producer.stop()

    consumer = AIOKafkaConsumer("orders", bootstrap_servers=mockbroker.bootstrap_servers,
                                group_id="billing", auto_offset_reset="earliest")
    await consumer.start()
    try:
        record = await asyncio.wait_for(consumer.getone(), timeout=30)
        await consumer.commit()
    finally:
        await consumer.stop()

    assert (record.partition, record.offset, record.value) == (1, 0, b"hello")
    assert mockbroker.committed("billing")[("orders", 1)] == 1
