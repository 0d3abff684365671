"""DeleteRecords to an offset inside a segment, then the retention check, then a restart: the records from the
new log start on are all still there. (The retention check once cut that segment's file to the size of the
batches the log still held, keeping the deleted front bytes and losing the tail: the share coordinator's
pruning of __share_group_state, state/share/state_jobs.py, hit it on every prune.)"""

from __future__ import annotations

from pathlib import Path

from mockbroker.server import MockBroker
from tests.handlers.conftest import make_batch, produce
from tests.rawclient import RawClient


def test_records_after_a_start_moved_inside_a_segment_survive_retention_and_a_restart(tmp_path: Path) -> None:
    with MockBroker(data_dir=tmp_path).run_in_thread() as b1:
        b1.create_topic("t", 1, config={"segment.bytes": "2048"})
        client = RawClient(b1.host, b1.port)
        for i in range(40):
            produce(client, "t", make_batch(f"{i:060d}".encode()))
        client.close()
        bases = [s["base_offset"] for s in b1.segments("t")]
        start = bases[-1] + 3  # inside the active segment
        partition = b1.node.cluster.topic("t").partitions[0]
        assert b1._call(lambda: b1.node.cluster.delete_records(partition, start)) == start
        b1.enforce_retention("t")
        assert [s["base_offset"] for s in b1.segments("t")] == [bases[-1]]
    with MockBroker(data_dir=tmp_path).run_in_thread() as b2:
        assert [int(r.value) for r in b2.records("t")] == list(range(start, 40))
