#!/usr/bin/env python3
"""Capture request frames written by real Kafka clients, as golden test data for the protocol package.

    .venv/bin/python tools/capture_frames.py [--out tests/data/frames] [--clients kafka-python,aiokafka,...]

Starts a mockbroker with frame capture on (MockBroker.capture), runs a small workload with each client
(produce with every codec it supports, consume with assign+seek, an admin listing where the client has
one), and writes each distinct (API key, version) request the client sent as one file:
    <out>/<client>/<api key>_<ApiName>_v<version>[_<n>].bin    the request frame without its size prefix
plus <out>/<client>/INDEX.json naming the client, its version, and each file's API, version and
client id. tests/protocol/test_golden_frames.py decodes every file and re-encodes it byte for byte.
The broker only has to answer well enough for the client to go on; what is kept is what the client wrote.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from mockbroker import MockBroker  # noqa: E402
from mockbroker.protocol.headers import peek_api_key_version  # noqa: E402
from mockbroker.protocol.messages import api_name  # noqa: E402

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
PRODUCE_KEEP = 5  # Produce frames kept per version (one per codec)


def workload_kafka_python(bootstrap: str) -> str:
    import kafka
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.admin import KafkaAdminClient

    for codec in CODECS:
        p = KafkaProducer(bootstrap_servers=bootstrap, compression_type=None if codec == "none" else codec)
        p.send("golden", key=b"k", value=b"v-" + codec.encode(), headers=[("h", b"1")]).get(10)
        p.close()
    c = KafkaConsumer(bootstrap_servers=bootstrap, consumer_timeout_ms=1500)
    c.assign([TopicPartition("golden", 0)])
    c.seek_to_beginning()
    list(c)
    c.close()
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.list_topics()
    admin.close()
    return str(kafka.__version__)


def workload_aiokafka(bootstrap: str) -> str:
    import aiokafka
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
    from aiokafka.structs import TopicPartition

    async def run() -> None:
        for codec in CODECS:
            p = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True,
                                 compression_type=None if codec == "none" else codec)
            await p.start()
            await p.send_and_wait("golden", b"v-" + codec.encode(), key=b"k", headers=[("h", b"1")])
            await p.stop()
        c = AIOKafkaConsumer(bootstrap_servers=bootstrap)
        await c.start()
        c.assign([TopicPartition("golden", 0)])
        await c.seek_to_beginning()
        await c.getmany(timeout_ms=1000)
        await c.stop()

    asyncio.run(run())
    return str(aiokafka.__version__)


def workload_confluent(bootstrap: str) -> str:
    import time

    import confluent_kafka
    from confluent_kafka import Consumer, Producer, TopicPartition

    for codec in CODECS:
        p = Producer({"bootstrap.servers": bootstrap, "compression.type": codec, "enable.idempotence": True})
        p.produce("golden", key=b"k", value=b"v-" + codec.encode() * 50, headers=[("h", b"1")])
        p.flush(10)
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "golden", "enable.auto.commit": False})
    c.assign([TopicPartition("golden", 0, 0)])
    deadline = time.time() + 3
    while time.time() < deadline:
        c.poll(0.2)
    c.close()
    return f"{confluent_kafka.version()[0]} (librdkafka {confluent_kafka.libversion()[0]})"


def workload_java(bootstrap: str) -> str:
    """kafka-clients through the harness (tests/interop/harness/java, `KafkaHarness --help`): a producer per
    codec (idempotent by default), a consumer that assigns, seeks by time and reads, the AdminClient."""
    from tests.interop.clients import of_type, run_java

    def run(command: str, args: dict[str, object]) -> list[dict[str, object]]:
        lines = run_java(command, {"bootstrap": bootstrap, "timeout_ms": 10_000, **args})
        failed = [line for line in lines if line.get("type") in ("send_error", "error", "fatal")]
        if failed:
            raise RuntimeError(f"java {command} failed: {failed}")
        return lines

    for codec in CODECS:
        run("produce", {"topic": "golden", "config": {"compression.type": codec},
                        "records": [{"partition": 0, "key": "k", "value": "v-" + codec * 50,
                                     "headers": [{"key": "h", "value": "1"}]}]})
    run("consume", {"topic": "golden", "partitions": [0], "seek": {"timestamp": 0}, "max_records": 1})
    run("admin", {"ops": [{"op": "listTopics"}, {"op": "describeTopics", "topics": ["golden"]},
                          {"op": "listOffsets", "topic": "golden", "spec": "max_timestamp"}]})
    [version] = of_type(run_java("version", {}), "version")
    return f"kafka-clients {version['kafka_clients']}"


WORKLOADS: dict[str, Callable[[str], str]] = {
    "kafka-python": workload_kafka_python,
    "aiokafka": workload_aiokafka,
    "confluent-kafka": workload_confluent,
    "java": workload_java,
}


def capture(client: str, out: Path) -> int:
    frames: list[bytes] = []
    with MockBroker(port=0).run_in_thread() as broker:
        broker.capture = frames
        version = WORKLOADS[client](broker.bootstrap_servers)
        broker.capture = None
    folder = out / client
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.bin"):
        old.unlink()
    counts: dict[tuple[int, int], int] = {}
    index = []
    for frame in frames:
        api_key, api_version, _ = peek_api_key_version(frame)
        n = counts.get((api_key, api_version), 0)
        if n >= (PRODUCE_KEEP if api_key == 0 else 1):
            continue
        counts[(api_key, api_version)] = n + 1
        name = f"{api_key:02d}_{api_name(api_key)}_v{api_version}" + (f"_{n}" if n else "") + ".bin"
        (folder / name).write_bytes(frame)
        index.append({"file": name, "api_key": api_key, "api": api_name(api_key), "version": api_version})
    (folder / "INDEX.json").write_text(json.dumps(
        {"client": client, "client_version": version, "captured_by": "tools/capture_frames.py",
         "frames": index}, indent=1) + "\n")
    return len(index)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=REPO / "tests" / "data" / "frames")
    parser.add_argument("--clients", default=",".join(WORKLOADS))
    args = parser.parse_args()
    for client in args.clients.split(","):
        n = capture(client, args.out)
        print(f"{client}: {n} frames")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
