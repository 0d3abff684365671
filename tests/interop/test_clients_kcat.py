"""kcat (librdkafka) against mockbroker: produce and consume with every codec, a start offset inside a batch,
offsets by time (-o s@ts and -Q), and the metadata listing (-L).

kcat cannot set a record's timestamp and takes headers per run (-H), not per record: its records carry
the run's headers and the producer's clock; the timestamp checks read records that confluent-kafka
(librdkafka too) wrote with explicit timestamps.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from confluent_kafka import Producer

from mockbroker import MockBroker
from tests.interop.clients import parse_json_lines, run_kcat
from tests.interop.workload import (
    BASE_TS,
    CODECS,
    PARTITIONS,
    Rec,
    Target,
    assert_log,
    assert_same_records,
    dataset,
    librdkafka_lz4_off_reason,
    offset_for_time,
    with_offsets,
)

pytestmark = pytest.mark.interop

LZ4_OFF_REASON = librdkafka_lz4_off_reason()


def run_headers(codec: str) -> tuple[tuple[str, bytes | None], ...]:
    return (("codec", codec.encode()), ("empty", b""))


def kcat_dataset(codec: str) -> list[Rec]:
    """The common dataset with the headers a kcat run gives every record and no timestamps."""
    return [replace(r, headers=run_headers(codec)) for r in dataset(codec, timestamps=False)]


def kcat_produce(bootstrap: str, topic: str, recs: list[Rec], codec: str) -> None:
    """One kcat -P run per partition: "key|value" lines, empty = null (-Z), one batch each (linger)."""
    for p in sorted({r.partition for r in recs}):
        lines = [f"{(r.key or b'').decode()}|{(r.value or b'').decode()}\n" for r in recs if r.partition == p]
        headers = [arg for k, v in run_headers(codec) for arg in ("-H", f"{k}={(v or b'').decode()}")]
        run_kcat(["-b", bootstrap, "-P", "-t", topic, "-p", str(p), "-K", "|", "-Z", *headers,
                  "-X", f"compression.codec={codec}", "-X", "linger.ms=100"], input="".join(lines))


def kcat_consume(bootstrap: str, topic: str, *args: str) -> list[Rec]:
    """kcat -C -J until the end of every partition (from -o beginning unless args say otherwise)."""
    # A short fetch wait: the end of a partition is only known from a Fetch that found nothing new.
    proc = run_kcat(["-b", bootstrap, "-C", "-t", topic, "-e", "-J", "-X", "fetch.wait.max.ms=50",
                     *(args or ("-o", "beginning"))])
    return [from_kcat(m) for m in parse_json_lines(proc.stdout)]


def from_kcat(m: dict[str, Any]) -> Rec:
    assert m.get("tstype") == "create", m
    flat = m.get("headers") or []
    headers = tuple((flat[i], None if flat[i + 1] is None else flat[i + 1].encode()) for i in range(0, len(flat), 2))
    return Rec(m["partition"], m["offset"], None if m["key"] is None else m["key"].encode(),
               None if m["payload"] is None else m["payload"].encode(), headers, m["ts"])


def test_kcat_produces_and_consumes_every_codec(target: Target) -> None:
    topics = {codec: target.new_topic(f"kcat-{codec}") for codec in CODECS}
    sent = {codec: kcat_dataset(codec) for codec in CODECS}
    for codec, topic in topics.items():
        kcat_produce(target.bootstrap, topic, sent[codec], codec)
    for codec, topic in topics.items():
        assert_same_records(kcat_consume(target.bootstrap, topic), sent[codec], timestamps=False)
        if target.broker is not None:
            # lz4: see test_kcat_lz4_batches_are_stored_lz4_compressed
            stored_codec = None if codec == "lz4" and LZ4_OFF_REASON else codec
            assert_log(target.broker, topic, sent[codec], stored_codec, timestamps=False)


@pytest.mark.xfail(LZ4_OFF_REASON is not None, reason=LZ4_OFF_REASON or "", strict=True)
def test_kcat_lz4_batches_are_stored_lz4_compressed(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("kcat-lz4", PARTITIONS)
    sent = kcat_dataset("lz4")
    kcat_produce(mockbroker.bootstrap_servers, "kcat-lz4", sent, "lz4")
    assert_log(mockbroker, "kcat-lz4", sent, "lz4", timestamps=False)


@pytest.mark.parametrize("codec", ["none", "gzip"])
def test_kcat_starts_in_the_middle_of_a_batch(mockbroker: MockBroker, codec: str) -> None:
    """One batch of 6 records; -o 4: the broker returns the whole batch, kcat skips offsets 0-3."""
    mockbroker.create_topic("kcat-seek", 1)
    recs = [Rec(0, None, b"k%d" % i, b"v%d " % i * 20, run_headers(codec)) for i in range(6)]
    kcat_produce(mockbroker.bootstrap_servers, "kcat-seek", recs, codec)
    [batch] = mockbroker.batches("kcat-seek")
    assert (batch.base_offset, batch.record_count, batch.codec.name.lower()) == (0, 6, codec)
    got = kcat_consume(mockbroker.bootstrap_servers, "kcat-seek", "-p", "0", "-o", "4")
    assert [(r.offset, r.key) for r in got] == [(4, b"k4"), (5, b"k5")]


def produce_with_timestamps(bootstrap: str, topic: str, recs: list[Rec]) -> None:
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
    for r in recs:
        p.produce(topic, r.value, r.key, partition=r.partition, timestamp=r.timestamp or 0, headers=list(r.headers))
    assert p.flush(15) == 0


def test_kcat_offsets_by_time(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("kcat-times", PARTITIONS)
    sent = dataset("times")
    produce_with_timestamps(mockbroker.bootstrap_servers, "kcat-times", sent)
    assert_log(mockbroker, "kcat-times", sent, "none")
    last = max(r.timestamp or 0 for r in sent)

    # -o s@ts: every partition from its first record at or after ts
    query = BASE_TS + 4500
    got = kcat_consume(mockbroker.bootstrap_servers, "kcat-times", "-o", f"s@{query}")
    expected = [r for r in with_offsets(sent) if (r.timestamp or 0) >= query]
    assert sorted(got) == sorted(expected)

    # -Q: the offset for a timestamp, per partition (-1: no record at or after it)
    for ts in [0, BASE_TS + 4500, last, last + 1]:
        proc = run_kcat(["-b", mockbroker.bootstrap_servers, "-Q", "-J",
                         *(arg for p in range(PARTITIONS) for arg in ("-t", f"kcat-times:{p}:{ts}"))])
        answer = json.loads(proc.stdout)["kcat-times"]
        found = {int(p): v["offset"] for p, v in answer.items() if p != "topic"}
        assert found == {p: (offset_for_time(sent, p, ts) or (-1, -1))[0] for p in range(PARTITIONS)}, ts


@pytest.mark.mockbroker(auto_create_topics=False)
def test_kcat_lists_metadata(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("kcat-meta-3", 3)
    mockbroker.create_topic("kcat-meta-1", 1)
    listing = json.loads(run_kcat(["-b", mockbroker.bootstrap_servers, "-L", "-J"]).stdout)
    assert listing["brokers"] == [{"id": 1, "name": mockbroker.bootstrap_servers}]
    assert listing["controllerid"] == 1
    topics = {t["topic"]: t for t in listing["topics"]}
    assert sorted(topics) == ["kcat-meta-1", "kcat-meta-3"]
    for name, count in [("kcat-meta-1", 1), ("kcat-meta-3", 3)]:
        assert "error" not in topics[name]
        assert topics[name]["partitions"] == [
            {"partition": p, "leader": 1, "replicas": [{"id": 1}], "isrs": [{"id": 1}]} for p in range(count)]

    one = json.loads(run_kcat(["-b", mockbroker.bootstrap_servers, "-L", "-J", "-t", "kcat-meta-3"]).stdout)
    assert [t["topic"] for t in one["topics"]] == ["kcat-meta-3"]
    missing = json.loads(run_kcat(["-b", mockbroker.bootstrap_servers, "-L", "-J", "-t", "kcat-nope"]).stdout)
    [nope] = missing["topics"]
    assert nope["topic"] == "kcat-nope" and "Unknown topic" in nope["error"], nope
    assert mockbroker.topics() == ["kcat-meta-1", "kcat-meta-3"]
