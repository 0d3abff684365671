"""`__share_group_state` is pruned as Kafka's share coordinator prunes it: a ShareSnapshot after
share.coordinator.snapshot.update.records.per.snapshot updates, every share.coordinator.state.topic.prune.interval.ms
the records before the lowest latest-snapshot offset of a partition deleted (its log start offset moves), and
every share.coordinator.cold.partition.snapshot.interval.ms a fresh snapshot of a quiet share partition, so it
does not hold the pruning back. After a prune, a restart on the data dir still brings back the exact
share-partition state. All on the broker clock."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from mockbroker.protocol.share_state_records import SHARE_SNAPSHOT, SHARE_UPDATE, decode_key
from mockbroker.server import MockBroker
from mockbroker.state.cluster.internal_topics import SHARE_STATE_TOPIC
from mockbroker.state.share.pruning import NeededOffsets
from tests.handlers.conftest import make_batch, produce
from tests.handlers.test_share_groups import acquired, heartbeat, share_fetch
from tests.rawclient import RawClient

ACK = 79
ACCEPT, RELEASE, REJECT = 1, 2, 3
HOUR_MS = 3_600_000
CONFIG: dict[str, Any] = {
    "share.auto.offset.reset": "earliest",
    "share.coordinator.state.topic.num.partitions": 1,  # every share partition's records in one partition
    "share.coordinator.snapshot.update.records.per.snapshot": 5,
    "share.coordinator.state.topic.segment.bytes": 2048,  # several segments, so whole ones go
    "share.coordinator.state.topic.prune.interval.ms": 300_000,
}


def state_log(broker: MockBroker) -> Any:
    return broker.node.cluster.topic(SHARE_STATE_TOPIC).partitions[0].log


def record_types(broker: MockBroker) -> list[tuple[int, int]]:
    """(offset, record type) of every record of __share_group_state's partition 0 still in its log."""
    return [(rec.offset, decode_key(rec.key).record_type) for _, rec in state_log(broker).records()]


def partition_view(broker: MockBroker, name: str = "q-0") -> dict[str, Any]:
    view = broker.share_groups()["sg"]["partitions"][name]
    return {"start_offset": view["start_offset"],
            "records": [(r["offset"], r["state"], r["delivery_count"]) for r in view["records"]]}


def persisted(broker: MockBroker, topic: str = "q") -> Any:
    t = broker.node.cluster.topic(topic)
    state = broker.node.share_coordinator.store.states[("sg", t.topic_id, 0)]
    return state.state_epoch, state.start_offset, state.batches


def share_acknowledge(client: RawClient, topic_id: uuid.UUID, epoch: int, acks: list[tuple[int, int, list[int]]]) -> None:
    """ShareAcknowledge of partition 0 (acknowledges without acquiring more, unlike a ShareFetch)."""
    body = {"group_id": "sg", "member_id": "a", "share_session_epoch": epoch, "topics": [
        {"topic_id": topic_id, "partitions": [{"partition_index": 0, "acknowledgement_batches": [
            {"first_offset": f, "last_offset": la, "acknowledge_types": t} for f, la, t in acks]}]}]}
    r = client.request(ACK, 1, body)
    assert r.error_code == 0 and [p.error_code for t in r.responses for p in t.partitions] == [0]


def acknowledge_one_by_one(client: RawClient, topic_id: uuid.UUID, count: int) -> int:
    """Fetch one record at a time and acknowledge it with the next fetch: most accepted, some rejected, some
    released on their first delivery (so delivered twice); the next session epoch."""
    epoch, acks, done = 0, {}, 0
    while done < count:
        r = share_fetch(client, topic_id, "a", epoch, acks=acks, max_records=1)
        epoch += 1
        (_, first, _, delivery), = acquired(r)
        kind = REJECT if first % 7 == 3 else RELEASE if first % 5 == 2 and delivery == 1 else ACCEPT
        acks = {0: [(first, first, [kind])]}
        done += 1
    share_acknowledge(client, topic_id, epoch, acks[0])
    return epoch + 1


def test_after_a_prune_the_log_start_moves_and_a_restart_restores_the_exact_state(tmp_path: Path) -> None:
    config = dict(CONFIG, **{"share.coordinator.cold.partition.snapshot.interval.ms": HOUR_MS})
    with MockBroker(data_dir=tmp_path, config=config).run_in_thread() as b1:
        b1.create_topic("q", 1)
        client = RawClient(b1.host, b1.port)
        produce(client, "q", make_batch(*[f"v{i}".encode() for i in range(40)]))
        heartbeat(client, "a", 0, ["q"])
        topic_id = b1.node.cluster.topic("q").topic_id
        epoch = acknowledge_one_by_one(client, topic_id, 30)
        # The tail: 3 of the next records in flight, then released, accepted and rejected.
        (_, first, last, _), = acquired(share_fetch(client, topic_id, "a", epoch, max_records=3))
        assert last == first + 2
        share_acknowledge(client, topic_id, epoch + 1, [(first, first, [RELEASE]), (first + 1, first + 1, [ACCEPT]),
                                                        (first + 2, first + 2, [REJECT])])
        assert acquired(share_fetch(client, topic_id, "a", epoch + 2, max_records=1)) == [(0, first, first, 2)]
        share_acknowledge(client, topic_id, epoch + 3, [(first, first, [RELEASE])])
        types = record_types(b1)
        assert len(types) > 30 and state_log(b1).log_start_offset == 0
        snapshots = [offset for offset, kind in types if kind == SHARE_SNAPSHOT]
        assert len(snapshots) >= 4  # the first, then one after each run of updates up to the limit
        before, before_state = partition_view(b1), persisted(b1)
        assert before == {"start_offset": first, "records": [
            (first, "AVAILABLE", 2), (first + 1, "ACKNOWLEDGED", 1), (first + 2, "ARCHIVED", 1)]}
        segments_before = len(b1.segments(SHARE_STATE_TOPIC))
        b1.clock.advance(299)
        assert state_log(b1).log_start_offset == 0  # not yet the prune interval
        b1.clock.advance(2)
        # Pruned before the latest snapshot: what is left starts with it.
        assert state_log(b1).log_start_offset == snapshots[-1]
        assert record_types(b1)[0] == (snapshots[-1], SHARE_SNAPSHOT)
        assert all(kind == SHARE_UPDATE for _, kind in record_types(b1)[1:])
        b1.enforce_retention(SHARE_STATE_TOPIC)  # the retention check: segments wholly below the start go
        assert len(b1.segments(SHARE_STATE_TOPIC)) < segments_before
        assert b1.segments(SHARE_STATE_TOPIC)[0]["base_offset"] <= snapshots[-1]
        before = partition_view(b1)  # the locks ran out on the way: nothing was acquired
        client.close()
    with MockBroker(data_dir=tmp_path, config=config).run_in_thread() as b2:
        assert state_log(b2).log_start_offset == snapshots[-1]
        assert partition_view(b2) == before
        assert persisted(b2) == before_state
        # Pruning goes on after the restart: more acknowledgements, a snapshot, the next prune moves on.
        client = RawClient(b2.host, b2.port)
        heartbeat(client, "a", 0, ["q"])
        topic_id = b2.node.cluster.topic("q").topic_id
        acknowledge_one_by_one(client, topic_id, 8)
        last_snapshot = [offset for offset, kind in record_types(b2) if kind == SHARE_SNAPSHOT][-1]
        assert last_snapshot > snapshots[-1]
        b2.clock.advance(301)
        assert state_log(b2).log_start_offset == last_snapshot
        client.close()


def test_a_quiet_share_partition_gets_a_cold_snapshot_so_pruning_passes_it(tmp_path: Path) -> None:
    config = dict(CONFIG, **{"share.coordinator.cold.partition.snapshot.interval.ms": 100_000})
    with MockBroker(data_dir=tmp_path, config=config).run_in_thread() as b1:
        b1.create_topic("q", 1)
        b1.create_topic("quiet", 1)
        client = RawClient(b1.host, b1.port)
        produce(client, "quiet", make_batch(b"x", b"y"))
        produce(client, "q", make_batch(*[f"v{i}".encode() for i in range(30)]))
        heartbeat(client, "a", 0, ["q", "quiet"])
        quiet_id, topic_id = (b1.node.cluster.topic(name).topic_id for name in ("quiet", "q"))
        assert acquired(share_fetch(client, quiet_id, "a", 0, max_records=1)) == [(0, 0, 0, 1)]
        share_acknowledge(client, quiet_id, 1, [(0, 0, [ACCEPT])])
        quiet_snapshot = min(o for o, kind in record_types(b1) if kind == SHARE_SNAPSHOT)
        share_acknowledge(client, quiet_id, -1, [])  # the session closed
        b1.clock.advance(50)
        acknowledge_one_by_one(client, topic_id, 20)  # the busy one writes snapshots, 50 s after the quiet one
        store = b1.node.share_coordinator.store
        quiet, busy = store.states[("sg", quiet_id, 0)], store.states[("sg", topic_id, 0)]
        busy_epoch = busy.snapshot_epoch
        b1.clock.advance(51)  # the cold snapshot job at 100 s: only the quiet one's snapshot is that old
        assert quiet.snapshot_epoch == 1 and quiet.write_timestamp - quiet.create_timestamp >= 100_000
        assert busy.snapshot_epoch == busy_epoch and busy.write_timestamp == busy.create_timestamp
        assert [o for o, kind in record_types(b1) if kind == SHARE_SNAPSHOT][-1] == state_log(b1).log_end_offset - 1
        assert state_log(b1).log_start_offset == 0
        b1.clock.advance(200)  # the prune job at 300 s: the quiet one's first snapshot no longer holds it back
        assert state_log(b1).log_start_offset > quiet_snapshot
        quiet_before = (quiet.start_offset, quiet.batches)
        client.close()
    with MockBroker(data_dir=tmp_path, config=config).run_in_thread() as b2:
        quiet = b2.node.share_coordinator.store.states[("sg", quiet_id, 0)]
        assert (quiet.start_offset, quiet.batches) == quiet_before == (1, [])


def test_the_redundant_offset_is_the_lowest_latest_snapshot_as_kafka_counts_it() -> None:
    needed = NeededOffsets()
    k1, k2, k3 = ("g", uuid.uuid4(), 0), ("g", uuid.uuid4(), 1), ("h", uuid.uuid4(), 0)
    needed.snapshot_written(k1, 0)
    assert needed.last_redundant_offset() is None  # offset 0: nothing before it
    needed.snapshot_written(k1, 10)
    assert needed.last_redundant_offset() == 10
    needed.snapshot_written(k2, 15)
    assert needed.last_redundant_offset() == 10  # k1's snapshot at 10 is still needed
    needed.snapshot_written(k1, 20)
    assert needed.last_redundant_offset() == 15
    needed.snapshot_written(k3, 25, deleted=True)  # a tombstone: counted once, then the key is gone
    assert needed.last_redundant_offset() == 15
    needed.snapshot_written(k2, 30)
    assert needed.last_redundant_offset() == 20 and k3 not in needed.snapshots
