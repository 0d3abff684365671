"""Read every partition of a topic from the beginning until EXPECT records have arrived; print them.

The consumer of docker/compose.yaml (python:3.11-slim with confluent-kafka installed at start):

    BOOTSTRAP_SERVERS=mockbroker:29092 TOPIC=orders EXPECT=3 python consume.py

Partitions are assigned by hand (assign + seek to the beginning, no consumer group): waits for the topic
to exist, prints one line per record (partition, offset, key, value), exits 0 once EXPECT records were
read, 1 after TIMEOUT_SECONDS without them. SECURITY_PROTOCOL, SASL_MECHANISM, SASL_USERNAME and
SASL_PASSWORD, when set, are the client's security.protocol, sasl.mechanism, sasl.username, sasl.password
(docker/compose.sasl.yaml).
"""

from __future__ import annotations

import os
import sys
import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, TopicPartition


def main() -> int:
    bootstrap = os.environ.get("BOOTSTRAP_SERVERS", "localhost:9092")
    topic = os.environ.get("TOPIC", "orders")
    expect = int(os.environ.get("EXPECT", "1"))
    deadline = time.monotonic() + float(os.environ.get("TIMEOUT_SECONDS", "60"))
    # group.id is required by the client; the partitions are assigned by hand, no group is joined.
    config = {"bootstrap.servers": bootstrap, "group.id": "example-consumer", "enable.auto.commit": False,
              "enable.partition.eof": False, "client.id": "example-consumer"}
    for variable, setting in (("SECURITY_PROTOCOL", "security.protocol"), ("SASL_MECHANISM", "sasl.mechanism"),
                              ("SASL_USERNAME", "sasl.username"), ("SASL_PASSWORD", "sasl.password")):
        if os.environ.get(variable):
            config[setting] = os.environ[variable]
    consumer = Consumer(config)
    try:
        partitions: list[int] = []
        while not partitions:
            if time.monotonic() > deadline:
                print(f"consume: topic {topic} not found on {bootstrap}", file=sys.stderr)
                return 1
            try:
                meta = consumer.list_topics(topic, timeout=5)
                t = meta.topics.get(topic)
                if t is not None and t.error is None:
                    partitions = sorted(t.partitions)
            except KafkaException:
                pass
            if not partitions:
                time.sleep(0.5)
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        seen = 0
        while seen < expect:
            if time.monotonic() > deadline:
                print(f"consume: {seen} of {expect} records from {topic} before the timeout", file=sys.stderr)
                return 1
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            if msg.error():
                print(f"consume: {msg.error()}", file=sys.stderr)
                continue
            raw_key, raw_value = msg.key(), msg.value()
            key = raw_key.decode("utf-8", "replace") if raw_key is not None else None
            value = raw_value.decode("utf-8", "replace") if raw_value is not None else None
            print(f"{msg.topic()}[{msg.partition()}]@{msg.offset()} key={key} value={value}", flush=True)
            seen += 1
        print(f"consume: read {seen} records from {topic}", flush=True)
        return 0
    finally:
        consumer.close()


if __name__ == "__main__":
    raise SystemExit(main())
