"""Load tier: 1,000 concurrent connections producing and consuming at once against one broker.

800 producer connections each send PRODUCE_REQUESTS acks=all requests of RECORDS_PER_BATCH records with
unique values; 200 consumer connections long-poll Fetch every partition from offset 0 at the same time.
Every acknowledged record must be read back exactly once, at its acknowledged offset, and the process's
resident memory may grow only by a bound. The clients are raw-protocol asyncio clients (the protocol
package), all in this process beside the broker's thread, so RLIMIT_NOFILE is raised to fit 2,000
sockets. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import hashlib
import resource
import struct
from collections import defaultdict
from typing import Any

import pytest

from mockbroker.protocol import headers as hdr
from mockbroker.protocol.messages import Msg, decode_response, encode_request
from mockbroker.protocol.primitives import Writer
from mockbroker.protocol.records.batch import iter_batches
from mockbroker.protocol.records.builder import build_batch
from mockbroker.server import MockBroker

# serial: 2,000 sockets and 1,000 clients in this process with a bound on its memory growth; it needs the
# cores (and file descriptors) to itself to stay well inside its waits. Run alone by scripts/test.
pytestmark = [pytest.mark.load, pytest.mark.serial]

TOPIC = "load"
PARTITIONS = 8
PRODUCERS = 800
CONSUMERS = 200
PRODUCE_REQUESTS = 20
RECORDS_PER_BATCH = 10
BOUND_S = 120.0
RSS_GROWTH_BOUND = 200 * 1024 * 1024  # measured: ~60 MiB
PRODUCE, FETCH = 0, 1


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()


def _raise_nofile(wanted: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < wanted:
        target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        if target < wanted:
            pytest.skip(f"RLIMIT_NOFILE hard limit {hard} < {wanted}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


class Client:
    """One raw-protocol connection: request/answer in order."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.correlation_id = 0

    @classmethod
    async def connect(cls, host: str, port: int) -> Client:
        reader, writer = await asyncio.open_connection(host, port)
        return cls(reader, writer)

    async def request(self, api_key: int, version: int, body: dict[str, Any]) -> Msg:
        self.correlation_id += 1
        w = Writer()
        hdr.encode_request_header(hdr.RequestHeader(api_key, version, self.correlation_id, "load"), w)
        encode_request(api_key, version, body, w)
        payload = w.getvalue()
        self.writer.write(struct.pack(">i", len(payload)) + payload)
        await self.writer.drain()
        (size,) = struct.unpack(">i", await self.reader.readexactly(4))
        frame = await self.reader.readexactly(size)
        cid, reader = hdr.decode_response_header(frame, hdr.response_header_version(api_key, version))
        assert cid == self.correlation_id
        return decode_response(api_key, version, reader)

    def close(self) -> None:
        self.writer.close()


async def produce_all(client: Client, producer: int, acked: dict[int, dict[int, bytes]]) -> None:
    partition = producer % PARTITIONS
    for req in range(PRODUCE_REQUESTS):
        values = [b"p%d-r%d-%d" % (producer, req, i) for i in range(RECORDS_PER_BATCH)]
        batch = build_batch([(None, v) for v in values])
        body = {"transactional_id": None, "acks": -1, "timeout_ms": 30000,
                "topic_data": [{"name": TOPIC, "partition_data": [{"index": partition, "records": bytes(batch)}]}]}
        resp = await client.request(PRODUCE, 9, body)
        p = resp.responses[0].partition_responses[0]
        assert p.error_code == 0, p
        for i, v in enumerate(values):
            acked[partition][p.base_offset + i] = v


async def consume_all(client: Client, partition: int, done: asyncio.Event) -> tuple[int, str]:
    """Read the partition with long polls until the producers are done and it is read to the end: the
    number of records and a digest of (offset, value) in offset order. Offsets must follow each other
    (no gap, none twice): there are no transactions, so a partition's offsets are contiguous."""
    digest = hashlib.sha256()
    offset = 0
    while True:
        body = {"replica_id": -1, "max_wait_ms": 200, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
                "session_id": 0, "session_epoch": -1, "rack_id": "", "forgotten_topics_data": [],
                "topics": [{"topic": TOPIC, "partitions": [{"partition": partition, "fetch_offset": offset,
                                                             "partition_max_bytes": 1 << 20,
                                                             "current_leader_epoch": -1, "log_start_offset": -1}]}]}
        resp = await client.request(FETCH, 12, body)
        p = resp.responses[0].partitions[0]
        assert p.error_code == 0, p
        for batch in iter_batches(bytes(p.records or b"")):
            for rec in batch.records():
                if rec.offset < offset:
                    continue  # before the fetch position, inside the first batch
                assert rec.offset == offset, f"partition {partition}: offset {rec.offset} after {offset - 1}"
                digest.update(b"%d:%s;" % (rec.offset, rec.value or b""))
                offset += 1
        if done.is_set() and offset >= p.high_watermark:
            return offset, digest.hexdigest()


def expected_digest(acked: dict[int, bytes]) -> tuple[int, str]:
    digest = hashlib.sha256()
    for offset in sorted(acked):
        digest.update(b"%d:%s;" % (offset, acked[offset]))
    return len(acked), digest.hexdigest()


async def run_load(broker: MockBroker) -> tuple[dict[int, dict[int, bytes]], list[tuple[int, str]]]:
    acked: dict[int, dict[int, bytes]] = defaultdict(dict)
    producers = [await Client.connect(broker.host, broker.port) for _ in range(PRODUCERS)]
    consumers = [await Client.connect(broker.host, broker.port) for _ in range(CONSUMERS)]
    done = asyncio.Event()
    try:
        consuming = [asyncio.create_task(consume_all(c, i % PARTITIONS, done)) for i, c in enumerate(consumers)]
        await asyncio.gather(*(produce_all(c, i, acked) for i, c in enumerate(producers)))
        done.set()
        read = await asyncio.gather(*consuming)
    finally:
        for c in producers + consumers:
            c.close()
    return acked, list(read)


def test_thousand_connections_produce_and_consume_every_acked_record_exactly_once() -> None:
    _raise_nofile(4 * (PRODUCERS + CONSUMERS) + 256)
    rss_before = _rss_bytes()
    with MockBroker(port=0).run_in_thread() as broker:
        broker.create_topic(TOPIC, PARTITIONS)
        acked, read = asyncio.run(asyncio.wait_for(run_load(broker), BOUND_S))
        assert len(broker._connections) <= PRODUCERS + CONSUMERS
        rss_after = _rss_bytes()
    total = sum(len(v) for v in acked.values())
    assert total == PRODUCERS * PRODUCE_REQUESTS * RECORDS_PER_BATCH
    for i, got in enumerate(read):
        partition = i % PARTITIONS
        # Exactly the acknowledged records, each once, at its acknowledged offset (contiguous offsets
        # from 0, so the acknowledged offsets must be too).
        assert sorted(acked[partition]) == list(range(len(acked[partition])))
        assert got == expected_digest(acked[partition]), f"consumer {i} of partition {partition}"
    print(f"load: {total} records, RSS grew {(rss_after - rss_before) >> 20} MiB")
    assert rss_after - rss_before < RSS_GROWTH_BOUND, f"RSS grew {(rss_after - rss_before) >> 20} MiB"
