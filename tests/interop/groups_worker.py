"""One consumer-group member in its own process, for tests/interop/test_groups_*.py.

    python tests/interop/groups_worker.py '<json>'

JSON: {"client": "confluent" | "aiokafka" | "kafka-python", "bootstrap", "group", "topic", "client_id",
       "strategy"?, "protocol"?: "classic" | "consumer", "instance_id"?, "session_timeout_ms"?,
       "heartbeat_interval_ms"?, "deadline_s"?}

It subscribes, polls, and for every record commits its offset synchronously, then prints
{"type": "record", "partition", "offset", "value"} (a record whose commit fails is not printed: its
partition moved, and the new owner reads it again). It also prints {"type": "assigned"/"revoked",
"partitions"} and {"type": "ready"} once subscribed. A line "close" on stdin (or EOF) makes it close
normally (leaving the group) and print {"type": "closed"}; the tests kill it (SIGKILL) to make it die.
Its whole life is bounded by deadline_s.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from typing import Any

POLL_S = 0.2


def emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def stdin_watch(stop: threading.Event) -> None:
    for line in sys.stdin:
        if line.strip() == "close":
            break
    stop.set()


def run_confluent(cfg: dict[str, Any], stop: threading.Event, deadline: float) -> None:
    from confluent_kafka import Consumer, KafkaException

    conf: dict[str, Any] = {"bootstrap.servers": cfg["bootstrap"], "group.id": cfg["group"],
                            "client.id": cfg["client_id"], "auto.offset.reset": "earliest",
                            "enable.auto.commit": False}
    if cfg.get("protocol") == "consumer":
        conf["group.protocol"] = "consumer"
    else:
        conf["partition.assignment.strategy"] = cfg.get("strategy", "range")
        conf["session.timeout.ms"] = cfg.get("session_timeout_ms", 10000)
        conf["heartbeat.interval.ms"] = cfg.get("heartbeat_interval_ms", 500)
    if cfg.get("instance_id"):
        conf["group.instance.id"] = cfg["instance_id"]
    consumer = Consumer(conf)

    def on_assign(c: Any, parts: list[Any]) -> None:
        emit({"type": "assigned", "partitions": sorted(p.partition for p in parts)})

    def on_revoke(c: Any, parts: list[Any]) -> None:
        emit({"type": "revoked", "partitions": sorted(p.partition for p in parts)})

    consumer.subscribe([cfg["topic"]], on_assign=on_assign, on_revoke=on_revoke)
    emit({"type": "ready"})
    while not stop.is_set() and time.monotonic() < deadline:
        msg = consumer.poll(POLL_S)
        if msg is None or msg.error():
            continue
        try:
            consumer.commit(message=msg, asynchronous=False)
        except KafkaException as exc:
            emit({"type": "commit_error", "partition": msg.partition(), "offset": msg.offset(), "error": str(exc)})
            continue
        emit({"type": "record", "partition": msg.partition(), "offset": msg.offset(),
              "value": (msg.value() or b"").decode()})
    consumer.close()


def run_kafka_python(cfg: dict[str, Any], stop: threading.Event, deadline: float) -> None:
    from kafka import ConsumerRebalanceListener, KafkaConsumer
    from kafka.errors import KafkaError
    from kafka.structs import OffsetAndMetadata, TopicPartition

    consumer = KafkaConsumer(
        bootstrap_servers=cfg["bootstrap"], group_id=cfg["group"], client_id=cfg["client_id"],
        auto_offset_reset="earliest", enable_auto_commit=False,
        session_timeout_ms=cfg.get("session_timeout_ms", 10000),
        heartbeat_interval_ms=cfg.get("heartbeat_interval_ms", 500),
        group_instance_id=cfg.get("instance_id"),
    )

    class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
        def on_partitions_assigned(self, assigned: Any) -> None:
            emit({"type": "assigned", "partitions": sorted(p.partition for p in assigned)})

        def on_partitions_revoked(self, revoked: Any) -> None:
            emit({"type": "revoked", "partitions": sorted(p.partition for p in revoked)})

    consumer.subscribe([cfg["topic"]], listener=Listener())
    # The topic's partitions must be known before the first JoinGroup. Otherwise a leader assigns nothing,
    # rejoins once the metadata arrives, and kafka-python 3.0.12 can lose that second join: when a short
    # poll() times out while the join is in flight, _perform_assignment (as leader) makes the assignment
    # snapshot equal the metadata snapshot, so need_rejoin() turns False and no later poll awaits the
    # finished join. The member never enables its heartbeat, never takes its partitions, and never learns
    # of the next rebalance (join_group_async in kafka/coordinator/base.py; seen in 2 of 28 busy runs of
    # the static-member test). Fetching the metadata here, after subscribe, updates the snapshot first.
    consumer.partitions_for_topic(cfg["topic"])
    emit({"type": "ready"})
    while not stop.is_set() and time.monotonic() < deadline:
        batches = consumer.poll(timeout_ms=int(POLL_S * 1000))
        for tp, records in batches.items():
            for rec in records:
                try:
                    consumer.commit({TopicPartition(tp.topic, tp.partition): OffsetAndMetadata(rec.offset + 1, None, -1)})
                except KafkaError as exc:
                    emit({"type": "commit_error", "partition": tp.partition, "offset": rec.offset, "error": str(exc)})
                    continue
                emit({"type": "record", "partition": tp.partition, "offset": rec.offset, "value": rec.value.decode()})
    consumer.close()


def run_aiokafka(cfg: dict[str, Any], stop: threading.Event, deadline: float) -> None:
    from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener, TopicPartition
    from aiokafka.errors import KafkaError

    class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
        async def on_partitions_assigned(self, assigned: Any) -> None:
            emit({"type": "assigned", "partitions": sorted(p.partition for p in assigned)})

        async def on_partitions_revoked(self, revoked: Any) -> None:
            emit({"type": "revoked", "partitions": sorted(p.partition for p in revoked)})

    async def main() -> None:
        consumer = AIOKafkaConsumer(
            bootstrap_servers=cfg["bootstrap"], group_id=cfg["group"], client_id=cfg["client_id"],
            auto_offset_reset="earliest", enable_auto_commit=False,
            session_timeout_ms=cfg.get("session_timeout_ms", 10000),
            heartbeat_interval_ms=cfg.get("heartbeat_interval_ms", 500),
            group_instance_id=cfg.get("instance_id"),
        )
        consumer.subscribe([cfg["topic"]], listener=Listener())
        await consumer.start()
        emit({"type": "ready"})
        try:
            while not stop.is_set() and time.monotonic() < deadline:
                batches = await consumer.getmany(timeout_ms=int(POLL_S * 1000))
                for tp, records in batches.items():
                    for rec in records:
                        try:
                            await consumer.commit({TopicPartition(tp.topic, tp.partition): rec.offset + 1})
                        except KafkaError as exc:
                            emit({"type": "commit_error", "partition": tp.partition, "offset": rec.offset,
                                  "error": str(exc)})
                            continue
                        emit({"type": "record", "partition": tp.partition, "offset": rec.offset,
                              "value": rec.value.decode()})
        finally:
            await consumer.stop()

    asyncio.run(main())


RUNNERS = {"confluent": run_confluent, "kafka-python": run_kafka_python, "aiokafka": run_aiokafka}


def main() -> int:
    cfg = json.loads(sys.argv[1])
    stop = threading.Event()
    threading.Thread(target=stdin_watch, args=(stop,), daemon=True).start()
    deadline = time.monotonic() + float(cfg.get("deadline_s", 120))
    RUNNERS[cfg["client"]](cfg, stop, deadline)
    emit({"type": "closed"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
