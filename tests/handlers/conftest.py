"""Shared helpers of the raw-protocol handler tests: a client per test, and one-call produce / fetch /
list offsets that answer the single partition asked about."""

from __future__ import annotations

import struct
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from mockbroker.protocol.messages import Msg
from mockbroker.protocol.records.batch import Record, RecordBatch, iter_batches
from mockbroker.protocol.records.builder import RecordInput, build_batch
from mockbroker.server import MockBroker
from tests.rawclient import RawClient

PRODUCE, FETCH, LIST_OFFSETS, METADATA = 0, 1, 2, 3
API_VERSIONS, DELETE_RECORDS, INIT_PRODUCER_ID = 18, 21, 22
INT32_MAX = 2**31 - 1
# Far below any topic's max.message.bytes and any partition limit used by the tests.
DEFAULT_PARTITION_MAX_BYTES = 1024 * 1024


@pytest.fixture
def client(mockbroker: MockBroker) -> Iterator[RawClient]:
    with RawClient(mockbroker.host, mockbroker.port) as c:
        yield c


def connect(broker: MockBroker) -> RawClient:
    return RawClient(broker.host, broker.port)


# -- batches -------------------------------------------------------------------------------------


def make_batch(*values: bytes | None, key: bytes | None = b"k", timestamps: Sequence[int] | None = None,
               **kwargs: Any) -> bytearray:
    """A v2 batch of records with these values (all with `key`), as a producer sends it (base offset 0)."""
    if timestamps is None:
        records = [RecordInput(key, v) for v in values]
    else:
        records = [RecordInput(key, v, (), ts) for v, ts in zip(values, timestamps, strict=True)]
    return build_batch(records, **kwargs)


def idempotent_batch(producer_id: int, epoch: int, base_sequence: int, *values: bytes) -> bytearray:
    return make_batch(*values, producer_id=producer_id, producer_epoch=epoch, base_sequence=base_sequence)


def batches_of(records: Any) -> list[RecordBatch]:
    """The v2 batches of a Fetch response's records field (None or empty: none)."""
    if not records:
        return []
    return list(iter_batches(bytes(records)))


def records_of(records: Any) -> list[Record]:
    return [r for b in batches_of(records) for r in b.records()]


def values_of(records: Any) -> list[bytes | None]:
    return [r.value for r in records_of(records)]


def with_header(batch: bytes | bytearray, *, base_offset: int = 0, leader_epoch: int = -1) -> bytes:
    """The batch with base offset and partition leader epoch replaced (both outside the CRC)."""
    out = bytearray(batch)
    struct.pack_into(">q", out, 0, base_offset)
    struct.pack_into(">i", out, 12, leader_epoch)
    return bytes(out)


# -- produce ---------------------------------------------------------------------------------------


def produce_body(topic: str, records: Any, *, partition: int = 0, acks: int = -1,
                 topic_id: uuid.UUID | None = None, transactional_id: str | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {"name": topic, "partition_data": [{"index": partition, "records": records}]}
    if topic_id is not None:
        data["topic_id"] = topic_id
    return {"transactional_id": transactional_id, "acks": acks, "timeout_ms": 5000, "topic_data": [data]}


def produce(client: RawClient, topic: str, records: Any, *, partition: int = 0, version: int = 9,
            acks: int = -1, topic_id: uuid.UUID | None = None) -> Msg:
    """Produce to one partition; its partition response."""
    resp = client.request(PRODUCE, version, produce_body(topic, records, partition=partition, acks=acks,
                                                         topic_id=topic_id))
    [t] = resp.responses
    [p] = t.partition_responses
    return p


# -- fetch -----------------------------------------------------------------------------------------


def fetch_partition(partition: int, offset: int, *, partition_max_bytes: int = DEFAULT_PARTITION_MAX_BYTES,
                    current_leader_epoch: int = -1) -> dict[str, Any]:
    return {"partition": partition, "fetch_offset": offset, "partition_max_bytes": partition_max_bytes,
            "current_leader_epoch": current_leader_epoch, "log_start_offset": -1}


def fetch_body(topics: list[dict[str, Any]], *, max_wait_ms: int = 0, min_bytes: int = 1,
               max_bytes: int = 50 * 1024 * 1024, isolation_level: int = 0, session_id: int = 0,
               session_epoch: int = -1, forgotten: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"replica_id": -1, "max_wait_ms": max_wait_ms, "min_bytes": min_bytes, "max_bytes": max_bytes,
            "isolation_level": isolation_level, "session_id": session_id, "session_epoch": session_epoch,
            "topics": topics, "forgotten_topics_data": forgotten or [], "rack_id": ""}


def fetch_topic(topic: str, *partitions: dict[str, Any], topic_id: uuid.UUID | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"topic": topic, "partitions": list(partitions)}
    if topic_id is not None:
        out["topic_id"] = topic_id
    return out


def fetch(client: RawClient, topic: str, offset: int = 0, *, partition: int = 0, version: int = 12,
          partition_max_bytes: int = DEFAULT_PARTITION_MAX_BYTES, current_leader_epoch: int = -1,
          topic_id: uuid.UUID | None = None, **kwargs: Any) -> Msg:
    """Fetch one partition (sessionless, no wait by default); its partition response."""
    part = fetch_partition(partition, offset, partition_max_bytes=partition_max_bytes,
                           current_leader_epoch=current_leader_epoch)
    resp = client.request(FETCH, version, fetch_body([fetch_topic(topic, part, topic_id=topic_id)], **kwargs))
    [t] = resp.responses
    [p] = t.partitions
    return p


# -- list offsets ----------------------------------------------------------------------------------


def list_offsets(client: RawClient, topic: str, timestamp: int, *, partition: int = 0, version: int = 7,
                 current_leader_epoch: int = -1, isolation_level: int = 0) -> Msg:
    part = {"partition_index": partition, "timestamp": timestamp, "current_leader_epoch": current_leader_epoch,
            "max_num_offsets": 1}
    resp = client.request(LIST_OFFSETS, version, {"replica_id": -1, "isolation_level": isolation_level,
                                                  "topics": [{"name": topic, "partitions": [part]}]})
    [t] = resp.topics
    [p] = t.partitions
    return p


def store_unvalidated(broker: MockBroker, topic: str, batch: bytes | bytearray, partition: int = 0) -> None:
    """Put a batch in a partition's log past Produce's validation, as a log written by an older broker or a
    replica may hold one: for the guards of the reads that decode stored records."""
    log = broker.cluster.topic(topic).partition(partition).log  # type: ignore[union-attr]
    broker._call(log.append, RecordBatch(bytearray(batch)), broker.clock.now_ms())
