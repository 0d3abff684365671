"""A clean stop and a new broker on the same data dir: everything a restart must keep comes back."""

from __future__ import annotations

from pathlib import Path

import pytest

from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.protocol.records.batch import ControlType
from mockbroker.storage.broker_storage import DataDirError
from tests.storage.helpers import T0, end_txn, open_broker, part, produce, values


def restart(broker_dir: Path, old: object) -> object:
    old.storage.close()  # type: ignore[attr-defined]
    return open_broker(broker_dir)


def test_topics_ids_configs_records_and_offsets_survive_a_restart(tmp_path: Path) -> None:
    b1 = open_broker(tmp_path)
    t = b1.create_topic("orders", 3, config={"retention.ms": "123456", "cleanup.policy": "delete"})
    b1.create_topic("other", 1)
    for i in range(5):
        produce(b1, "orders", b"o%d" % i, partition=i % 3)
    produce(b1, "other", b"x", b"y")
    b1.cluster.delete_records(part(b1, "other"), 1)
    b1.storage.close()  # type: ignore[union-attr]
    b2 = open_broker(tmp_path)
    assert b2.topics() == ["orders", "other"]
    t2 = b2.cluster.topic("orders")
    assert t2 is not None and t2.topic_id == t.topic_id and len(t2.partitions) == 3
    assert t2.config.overrides() == {"retention.ms": "123456", "cleanup.policy": "delete"}
    assert b2.cluster.cluster_id == b1.cluster.cluster_id
    assert values(b2, "orders", 0) == [b"o0", b"o3"] and values(b2, "orders", 2) == [b"o2"]
    assert b2.offsets("other") == {"log_start_offset": 1, "high_watermark": 2, "last_stable_offset": 2}
    assert values(b2, "other") == [b"y"]
    # and the log goes on where it was, under a new leader epoch (offline, then elected again)
    assert produce(b2, "other", b"z").base_offset == 2
    assert b2.partition_state("other", 0).leader_epoch == 1
    assert part(b2, "other").log.epoch_starts == [(0, 0), (1, 2)]
    assert (tmp_path / "other-0" / "leader-epoch-checkpoint").read_text() == "0\n2\n0 0\n1 2\n"


def test_an_idempotent_producer_continues_and_its_last_batch_is_a_duplicate(tmp_path: Path) -> None:
    b1 = open_broker(tmp_path)
    b1.create_topic("t")
    for seq in range(3):
        produce(b1, "t", b"a%d" % seq, b"b%d" % seq, pid=1000, epoch=0, seq=2 * seq)
    b1.storage.close()  # type: ignore[union-attr]
    b2 = open_broker(tmp_path)
    retry = produce(b2, "t", b"a2", b"b2", pid=1000, epoch=0, seq=4)
    assert retry.base_offset == 4  # answered with the offset first given, not appended again
    assert part(b2, "t").log.log_end_offset == 6
    with pytest.raises(KafkaError) as err:
        produce(b2, "t", b"gap", pid=1000, epoch=0, seq=9)
    assert err.value.code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert produce(b2, "t", b"next", pid=1000, epoch=0, seq=6).base_offset == 6


def test_producer_state_comes_from_the_snapshot_plus_the_batches_after_it(tmp_path: Path) -> None:
    b1 = open_broker(tmp_path)
    b1.create_topic("t", config={"segment.bytes": "200"})
    for seq in range(6):
        produce(b1, "t", b"x" * 40, pid=1000, epoch=0, seq=seq)
    assert len(part(b1, "t").log.segments) > 2  # rolled: snapshots at each roll
    snapshots = sorted(p.name for p in (tmp_path / "t-0").glob("*.snapshot"))
    assert snapshots and snapshots[0] != "00000000000000000000.snapshot"
    b1.storage.close()  # type: ignore[union-attr]
    b2 = open_broker(tmp_path)
    assert b2.producers("t")[0]["last_sequence"] == 5
    assert produce(b2, "t", b"x" * 40, pid=1000, epoch=0, seq=5).base_offset == 5


def test_an_open_transaction_keeps_the_lso_and_aborted_transactions_stay_listed(tmp_path: Path) -> None:
    b1 = open_broker(tmp_path)
    b1.create_topic("t")
    produce(b1, "t", b"aborted", pid=1000, epoch=0, seq=0, txn=True)
    end_txn(b1, "t", ControlType.ABORT, 1000, 0)
    produce(b1, "t", b"plain")
    produce(b1, "t", b"open", pid=1001, epoch=0, seq=0, txn=True)
    assert b1.offsets("t")["last_stable_offset"] == 3
    b1.storage.close()  # type: ignore[union-attr]
    b2 = open_broker(tmp_path)
    assert b2.offsets("t") == {"log_start_offset": 0, "high_watermark": 4, "last_stable_offset": 3}
    assert b2.node.aborted_transactions(part(b2, "t"), 0, 4) == [(1000, 0)]
    end_txn(b2, "t", ControlType.COMMIT, 1001, 0)
    assert b2.offsets("t")["last_stable_offset"] == 5


def test_producer_ids_handed_out_before_a_restart_are_never_handed_out_again(tmp_path: Path) -> None:
    b1 = open_broker(tmp_path)
    given = [b1.cluster.allocate_producer_id() for _ in range(1500)]
    b1.storage.close()  # type: ignore[union-attr]
    b2 = open_broker(tmp_path)
    assert b2.cluster.allocate_producer_id() > max(given)


def test_retention_deletes_segment_files_and_the_restart_keeps_the_log_start(tmp_path: Path) -> None:
    b1 = open_broker(tmp_path)
    b1.create_topic("t", config={"segment.bytes": "200", "retention.bytes": "250"})
    for i in range(8):
        produce(b1, "t", b"x" * 40 + b"%d" % i)
    before = sorted(p.name for p in (tmp_path / "t-0").glob("*.log"))
    assert b1.enforce_retention("t") > 0
    after = sorted(p.name for p in (tmp_path / "t-0").glob("*.log"))
    assert after == [f"{s['base_offset']:020d}.log" for s in b1.segments("t")]
    assert len(after) < len(before) and not list((tmp_path / "t-0").glob("*.deleted"))
    start = b1.offsets("t")["log_start_offset"]
    assert start > 0
    assert (tmp_path / "log-start-offset-checkpoint").read_text() == f"0\n1\nt 0 {start}\n"
    b1.storage.close()  # type: ignore[union-attr]
    b2 = open_broker(tmp_path)
    assert b2.offsets("t")["log_start_offset"] == start and b2.offsets("t")["high_watermark"] == 8
    assert values(b2, "t") == [b"x" * 40 + b"%d" % i for i in range(start, 8)]


def test_compaction_swaps_the_cleaned_segments_in_and_a_restart_reads_them(tmp_path: Path) -> None:
    b1 = open_broker(tmp_path)
    b1.create_topic("c", config={"cleanup.policy": "compact", "segment.bytes": "300"})
    for i in range(12):
        produce(b1, "c", b"v%d" % i, key=b"k%d" % (i % 3))
    b1.compact("c")
    kept = values(b1, "c")
    assert kept == [b"v9", b"v10", b"v11"]
    names = {p.name for p in (tmp_path / "c-0").iterdir()}
    assert not [n for n in names if n.endswith((".cleaned", ".swap", ".deleted"))]
    on_disk = b"".join((tmp_path / "c-0" / f"{s['base_offset']:020d}.log").read_bytes() for s in b1.segments("c"))
    assert on_disk == b"".join(bytes(b.data) for b in part(b1, "c").log.batches)
    checkpoint = part(b1, "c").log.segments.cleaner_checkpoint
    b1.storage.close()  # type: ignore[union-attr]
    b2 = open_broker(tmp_path)
    assert values(b2, "c") == kept
    assert part(b2, "c").log.segments.cleaner_checkpoint == checkpoint
    assert produce(b2, "c", b"v12", key=b"k0").base_offset == 12


def test_a_deleted_topic_leaves_the_data_dir(tmp_path: Path) -> None:
    b1 = open_broker(tmp_path)
    b1.create_topic("gone", 2)
    b1.create_topic("stays")
    produce(b1, "gone", b"x")
    b1.delete_topic("gone")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("gone")]
    b1.storage.close()  # type: ignore[union-attr]
    b2 = open_broker(tmp_path)
    assert b2.topics() == ["stays"]
    b2.create_topic("gone")  # a new topic of the same name starts empty, with a new id
    assert values(b2, "gone") == []


def test_added_partitions_and_altered_configs_survive(tmp_path: Path) -> None:
    b1 = open_broker(tmp_path)
    b1.create_topic("t", 1)
    b1.cluster.create_partitions("t", 3)
    b1.cluster.alter_topic_config("t", [("retention.ms", 0, "1000")])
    produce(b1, "t", b"p2", partition=2)
    b1.storage.close()  # type: ignore[union-attr]
    b2 = open_broker(tmp_path)
    t = b2.cluster.topic("t")
    assert t is not None and len(t.partitions) == 3 and t.config.get("retention.ms") == 1000
    assert values(b2, "t", 2) == [b"p2"]


def test_a_cluster_keeps_one_log_directory_per_node(tmp_path: Path) -> None:
    b1 = open_broker(tmp_path, brokers=3)
    b1.create_topic("t", 3, replication_factor=2)
    for i in range(3):
        produce(b1, "t", b"v%d" % i, partition=i)
    homes = {p.index: p.replicas[0] for p in b1.cluster.topic("t").partitions}  # type: ignore[union-attr]
    b1.storage.close()  # type: ignore[union-attr]
    for node in (1, 2, 3):
        assert (tmp_path / f"node-{node}" / "meta.properties").exists()
    for index, node in homes.items():
        assert (tmp_path / f"node-{node}" / f"t-{index}" / "00000000000000000000.log").stat().st_size > 0
    b2 = open_broker(tmp_path, brokers=3)
    assert [values(b2, "t", i) for i in range(3)] == [[b"v0"], [b"v1"], [b"v2"]]
    assert {p.index: p.replicas[0] for p in b2.cluster.topic("t").partitions} == homes  # type: ignore[union-attr]


def test_a_data_dir_of_another_cluster_or_in_use_is_refused(tmp_path: Path) -> None:
    b1 = open_broker(tmp_path, cluster_id="first")
    with pytest.raises(DataDirError, match="in use"):
        open_broker(tmp_path)
    b1.storage.close()  # type: ignore[union-attr]
    with pytest.raises(DataDirError, match="cluster"):
        open_broker(tmp_path, cluster_id="second")
    assert open_broker(tmp_path).cluster.cluster_id == "first"  # no id given: the data dir's


def test_in_memory_mode_touches_no_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mockbroker.server import MockBroker

    monkeypatch.chdir(tmp_path)
    broker = MockBroker()
    broker.create_topic("t")
    produce(broker, "t", b"x")
    assert broker.storage is None and part(broker, "t").log.sink is None and broker.cluster.storage is None
    assert list(tmp_path.iterdir()) == []
    assert T0 > 0


def test_the_first_roll_after_a_restart_takes_a_producer_snapshot(tmp_path: Path) -> None:
    b1 = open_broker(tmp_path)
    b1.create_topic("t", config={"segment.bytes": "200"})
    produce(b1, "t", b"x" * 100, pid=1000, epoch=0, seq=0)
    b1.storage.close()  # type: ignore[union-attr]
    b2 = open_broker(tmp_path)
    produce(b2, "t", b"x" * 100, pid=1000, epoch=0, seq=1)  # rolls: the segment holds one batch already
    assert [s["base_offset"] for s in b2.segments("t")] == [0, 1]
    assert (tmp_path / "t-0" / "00000000000000000001.snapshot").exists()
    assert (tmp_path / "recovery-point-offset-checkpoint").read_text() == "0\n1\nt 0 1\n"


def test_partition_directories_without_metadata_are_loaded_as_topics(tmp_path: Path) -> None:
    b1 = open_broker(tmp_path)
    t = b1.create_topic("found", 2, config={"retention.ms": "5000"})
    produce(b1, "found", b"a", partition=1)
    b1.storage.close()  # type: ignore[union-attr]
    (tmp_path / "mockbroker-metadata.json").unlink()  # as in a log directory Kafka wrote
    (tmp_path / "__cluster_metadata-0").mkdir()  # Kafka's metadata log is not a topic
    b2 = open_broker(tmp_path)
    assert b2.topics() == ["found"]
    found = b2.cluster.topic("found")
    assert found is not None and found.topic_id == t.topic_id and len(found.partitions) == 2
    assert values(b2, "found", 1) == [b"a"]
    assert found.config.overrides() == {}  # configs live in Kafka's metadata log: the defaults


def test_a_truncation_from_the_end_cuts_the_files_so_a_restart_does_not_bring_the_tail_back(tmp_path: Path) -> None:
    b1 = open_broker(tmp_path)
    b1.create_topic("t", config={"segment.bytes": "300"})
    for i in range(10):
        produce(b1, "t", b"x" * 40 + b"%d" % i, pid=1000, epoch=0, seq=i)
    assert len(b1.segments("t")) >= 3
    part(b1, "t").log.truncate_to(4)  # what an unclean election does to the new leader's log
    assert sorted(p.name for p in (tmp_path / "t-0").glob("*.log")) == [f"{0:020d}.log", f"{2:020d}.log"]
    produce(b1, "t", b"new", pid=1000, epoch=0, seq=4)
    assert values(b1, "t")[-1] == b"new"
    b1.storage.close()  # type: ignore[union-attr]
    b2 = open_broker(tmp_path)
    assert values(b2, "t") == [b"x" * 40 + b"%d" % i for i in range(4)] + [b"new"]
    assert b2.producers("t")[0]["last_sequence"] == 4


def test_compaction_keeps_the_txnindex_entries_of_markers_that_stay(tmp_path: Path) -> None:
    from mockbroker.storage import txn_index

    b1 = open_broker(tmp_path)
    b1.create_topic("c", config={"cleanup.policy": "compact"})
    produce(b1, "c", b"aborted", key=b"k", pid=1000, epoch=0, seq=0, txn=True)
    end_txn(b1, "c", ControlType.ABORT, 1000, 0)
    produce(b1, "c", b"v", key=b"k")
    b1.compact("c")  # the aborted batch goes; its marker stays this pass (a batch of it was seen)
    entries = [e for p in (tmp_path / "c-0").glob("*.txnindex") for e in txn_index.decode(p.read_bytes())]
    assert [(e.producer_id, e.first_offset, e.last_offset) for e in entries] == [(1000, 0, 1)]
    assert not list((tmp_path / "c-0").glob("*.cleaned")) and not list((tmp_path / "c-0").glob("*.swap"))
    b1.storage.close()  # type: ignore[union-attr]
    b2 = open_broker(tmp_path)
    assert values(b2, "c") == [b"v"]


def test_partition_directories_the_metadata_does_not_name_are_set_aside_as_strays(tmp_path: Path) -> None:
    b1 = open_broker(tmp_path)
    b1.create_topic("t", 1)
    b1.storage.close()  # type: ignore[union-attr]
    # a crash in the middle of CreatePartitions (directory made, metadata not yet written), and one of a
    # topic that never made it into the metadata
    for name in ("t-1", "ghost-0"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "00000000000000000000.log").write_bytes(b"")
    (tmp_path / "old-0.0123abcd-delete").mkdir()  # a deletion that did not finish
    b2 = open_broker(tmp_path)
    assert b2.topics() == ["t"] and len(b2.cluster.topic("t").partitions) == 1  # type: ignore[union-attr]
    names = sorted(p.name for p in tmp_path.iterdir() if p.is_dir())
    assert [n for n in names if n.startswith("ghost-0.") and n.endswith("-stray")]
    assert [n for n in names if n.startswith("t-1.") and n.endswith("-stray")]
    assert "t-1" not in names and "ghost-0" not in names and "old-0.0123abcd-delete" not in names
    b2.cluster.create_partitions("t", 2)  # the new partition starts empty, not on the stray's files
    assert values(b2, "t", 1) == []
