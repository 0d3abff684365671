"""Back-pressure: a client that sends requests but does not read its answers cannot make the broker buffer
without end. Once the socket's write buffer is over its high-water mark the connection stops reading and
handling requests; when the client reads again, every answer comes, in order."""

from __future__ import annotations

import time

from mockbroker import MockBroker
from mockbroker.protocol.records.builder import build_batch
from tests.rawclient import RawClient

PRODUCE, FETCH = 0, 1
REQUESTS = 300


def fetch_body(topic: str) -> dict[str, object]:
    return {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 64 << 20, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1, "rack_id": "", "forgotten_topics_data": [],
            "topics": [{"topic": topic, "partitions": [{"partition": 0, "fetch_offset": 0, "log_start_offset": -1,
                                                        "partition_max_bytes": 64 << 20}]}]}


def test_slow_reader_pauses_its_connection_and_still_gets_every_answer_in_order(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("bp")
    with RawClient(mockbroker.host, mockbroker.port) as producer:
        for n in range(8):
            batch = build_batch([(b"k", bytes([n]) * 1000) for _ in range(900)])
            resp = producer.request(PRODUCE, 9, {"acks": -1, "timeout_ms": 5000, "topic_data": [
                {"name": "bp", "partition_data": [{"index": 0, "records": batch}]}]})
            assert resp.responses[0].partition_responses[0].error_code == 0
    stored = sum(b.size for b in mockbroker.batches("bp"))  # ~7 MB per answer

    with RawClient(mockbroker.host, mockbroker.port) as client:
        frames = b"".join(client.encode(FETCH, 12, fetch_body("bp"), correlation_id=i) for i in range(REQUESTS))
        client.send_frame(frames)  # all requests written, no answer read yet

        # The broker stops handling them once its write buffer is full (bounded wait).
        deadline = time.monotonic() + 20
        handled = 0
        while time.monotonic() < deadline:
            handled = len(mockbroker.received(FETCH))
            paused = any(c._write_paused for c in list(mockbroker._connections))
            if paused and handled == len(mockbroker.received(FETCH)):
                time.sleep(0.2)
                if len(mockbroker.received(FETCH)) == handled:
                    break
            time.sleep(0.05)
        assert handled < REQUESTS / 4, f"{handled} of {REQUESTS} requests handled while the client read nothing"
        buffered = sum(c.transport.get_write_buffer_size() for c in list(mockbroker._connections)
                       if c.transport is not None)
        assert buffered < 4 * stored + (1 << 20), "the broker buffered far more than a few answers"

        # Reading drains it: every answer arrives, in request order, with the whole partition.
        for i in range(REQUESTS):
            cid, resp = client.recv(FETCH, 12)
            assert cid == i
            part = resp.responses[0].partitions[0]
            assert part.error_code == 0 and len(part.records) == stored
    assert len(mockbroker.received(FETCH)) == REQUESTS
