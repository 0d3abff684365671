"""A KIP-848 consumer group across a broker restart on the same data dir, with librdkafka's and the Java
client's consumer (group.protocol=consumer) running through it (issue #17): the group comes back from its ConsumerGroup*
records with its epoch, member and assignment, the member's heartbeats in its epoch are accepted (no
rejoin, same member id and epoch), and it goes on consuming and committing."""

from __future__ import annotations

import time
from pathlib import Path

from mockbroker import MockBroker
from tests.interop.test_coordinator_restart_clients import free_port, produce_plain, wait_for

FAST_HEARTBEATS = {"group.consumer.heartbeat.interval.ms": 500}


def test_librdkafka_consumer_protocol_member_runs_across_a_restart(tmp_path: Path) -> None:
    from confluent_kafka import Consumer

    port = free_port()
    bootstrap = f"127.0.0.1:{port}"
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "live848", "group.protocol": "consumer",
                  "auto.offset.reset": "earliest", "enable.auto.commit": False, "reconnect.backoff.max.ms": 200})
    got: list[bytes] = []

    def poll_until(count: int) -> None:
        deadline = time.monotonic() + 60
        while len(got) < count and time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is not None and m.error() is None:
                got.append(m.value() or b"")
                c.commit(message=m, asynchronous=False)

    try:
        with MockBroker(port=port, data_dir=tmp_path, config=FAST_HEARTBEATS).run_in_thread() as b1:
            b1.create_topic("t", 2)
            produce_plain(bootstrap, "t", [b"v%d" % i for i in range(5)])
            c.subscribe(["t"])
            poll_until(5)
            wait_for(lambda: sum(b1.committed("live848").values()) == 5, "the commits")
            [before] = b1.groups()
            assert before.group_type == "consumer" and before.state == "Stable"
            [member] = before.members
            assert member.assignment == {"t": [0, 1]}
        with MockBroker(port=port, data_dir=tmp_path, config=FAST_HEARTBEATS).run_in_thread() as b2:
            [loaded] = b2.groups()
            assert (loaded.group_type, loaded.state, loaded.generation_or_epoch) == \
                ("consumer", "Stable", before.generation_or_epoch)
            assert loaded.members == before.members
            produce_plain(bootstrap, "t", [b"w%d" % i for i in range(5)])
            poll_until(10)
            assert got == [b"v%d" % i for i in range(5)] + [b"w%d" % i for i in range(5)]
            wait_for(lambda: sum(b2.committed("live848").values()) == 10, "the commits after the restart")
            # the member heartbeated in its epoch: it was never fenced, nor did it join again
            [after] = b2.groups()
            assert (after.state, after.generation_or_epoch, after.members) == \
                ("Stable", before.generation_or_epoch, before.members)
    finally:
        c.close()


def test_java_consumer_protocol_member_runs_across_a_restart(tmp_path: Path) -> None:
    """The Java client (kafka-clients 4.3.0, group.protocol=consumer, the harness's `group-consume`):
    its partitions are assigned once and never revoked or lost across the restart, and it ends as the
    member it was."""
    import concurrent.futures

    from tests.interop.clients import of_type, require_java, run_java

    require_java()
    port = free_port()
    bootstrap = f"127.0.0.1:{port}"
    data_dir, stop_file = tmp_path / "data", tmp_path / "stop"

    def member() -> list[dict[str, object]]:
        return run_java("group-consume", {  # type: ignore[no-any-return]
            "bootstrap": bootstrap, "topic": "t", "group_id": "java848", "timeout_ms": 15000,
            "stop_file": str(stop_file), "stop_after_ms": 100_000,
            "config": {"group.protocol": "consumer", "client.id": "java-848", "reconnect.backoff.max.ms": 200}},
            timeout=130)

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        future = None
        try:
            with MockBroker(port=port, data_dir=data_dir, config=FAST_HEARTBEATS).run_in_thread() as b1:
                b1.create_topic("t", 2)
                produce_plain(bootstrap, "t", [b"v%d" % i for i in range(5)])
                future = pool.submit(member)
                wait_for(lambda: sum(b1.committed("java848").values()) == 5, "the commits", timeout_s=90)
                [before] = b1.groups()
                assert before.state == "Stable"
            with MockBroker(port=port, data_dir=data_dir, config=FAST_HEARTBEATS).run_in_thread() as b2:
                [loaded] = b2.groups()
                assert (loaded.state, loaded.generation_or_epoch, loaded.members) == \
                    ("Stable", before.generation_or_epoch, before.members)
                produce_plain(bootstrap, "t", [b"w%d" % i for i in range(5)])
                wait_for(lambda: sum(b2.committed("java848").values()) == 10, "the commits after the restart",
                         timeout_s=90)
                [after] = b2.groups()
                assert (after.state, after.generation_or_epoch, after.members) == \
                    ("Stable", before.generation_or_epoch, before.members)
        finally:
            stop_file.touch()
        assert future is not None
        lines = future.result(timeout=130)
    values = sorted(str(r["value"]) for r in of_type(lines, "record"))
    assert values == sorted([f"v{i}" for i in range(5)] + [f"w{i}" for i in range(5)])
    assert of_type(lines, "lost") == []
    assert len([e for e in of_type(lines, "assigned") if e["partitions"]]) == 1  # once, before the restart
    [done] = of_type(lines, "done")
    assert done["member_id"] == before.members[0].member_id
