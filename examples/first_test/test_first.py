from confluent_kafka import Producer


def test_producer_writes_one_record(mockbroker):
    mockbroker.create_topic("orders")
    producer = Producer({"bootstrap.servers": mockbroker.bootstrap_servers})
    producer.produce("orders", key=b"42", value=b'{"qty": 1}')
    assert producer.flush(10) == 0          # nothing left in the queue: delivered

    [record] = mockbroker.records("orders")
    assert (record.partition, record.offset) == (0, 0)
    assert (record.key, record.value) == (b"42", b'{"qty": 1}')
