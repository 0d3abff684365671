"""A KIP-848 consumer group across a broker restart on the same data dir, with librdkafka's consumer
(group.protocol=consumer) running through it (issue #17): the group comes back from its ConsumerGroup*
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
