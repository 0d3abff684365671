"""The `mockbroker` command (also `python -m mockbroker`): run a broker until SIGINT/SIGTERM.

    mockbroker --port 9092 --topic orders:3 --topic payments

Prints one line with the bootstrap address once the broker accepts connections.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys

from mockbroker.errors import KafkaError
from mockbroker.server import MockBroker


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mockbroker", description="A Kafka-compatible broker for tests.")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=9092, help="port to bind; 0 picks a free one (default 9092)")
    p.add_argument("--advertised-host", help="host that Metadata advertises (default: the bind host)")
    p.add_argument("--advertised-port", type=int, help="port that Metadata advertises (default: the bound port)")
    p.add_argument("--node-id", type=int, default=1, help="this broker's node id (default 1)")
    p.add_argument("--cluster-id", help="cluster id (default: random)")
    p.add_argument("--partitions", type=int, default=1, help="partitions of auto-created topics (default 1)")
    p.add_argument("--topic", action="append", default=[], metavar="NAME[:PARTITIONS]",
                   help="create a topic at start (repeatable)")
    p.add_argument("--no-auto-create", action="store_true", help="disable auto topic creation")
    p.add_argument("--config", action="append", default=[], metavar="KEY=VALUE",
                   help="a broker setting in Kafka's name, e.g. log.retention.ms=60000 (repeatable)")
    p.add_argument("--log-level", default="WARNING", help="DEBUG, INFO, WARNING (default), ERROR")
    return p


def parse_topic(spec: str) -> tuple[str, int]:
    name, _, parts = spec.partition(":")
    return name, int(parts) if parts else -1


def listening_line(broker: MockBroker) -> str:
    """"mockbroker listening on HOST:PORT" (the bound address), plus the advertised one if different."""
    parts = []
    for lst in broker.cluster.listeners:
        bound = f"{lst.host}:{lst.port}"
        public = f"{lst.public_host}:{lst.public_port}"
        parts.append(bound if bound == public else f"{bound} (advertised as {public})")
    return "mockbroker listening on " + ", ".join(parts)


async def serve(args: argparse.Namespace) -> int:
    config: dict[str, str] = {}
    for item in args.config:
        key, sep, value = item.partition("=")
        if not sep:
            print(f"mockbroker: --config wants KEY=VALUE, got {item!r}", file=sys.stderr)
            return 2
        config[key.strip()] = value.strip()
    broker = MockBroker(
        args.host,
        args.port,
        advertised_host=args.advertised_host,
        advertised_port=args.advertised_port,
        node_id=args.node_id,
        cluster_id=args.cluster_id,
        partitions=args.partitions,
        auto_create_topics=not args.no_auto_create,
        config=config,
    )
    try:
        for spec in args.topic:
            name, parts = parse_topic(spec)
            broker.cluster.create_topic(name, parts if parts > 0 else -1)
    except (KafkaError, ValueError) as exc:
        print(f"mockbroker: cannot create topic: {exc}", file=sys.stderr)
        return 2
    try:
        await broker.start()
    except OSError as exc:
        print(f"mockbroker: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):
            pass
    print(listening_line(broker), flush=True)
    await stop.wait()
    await broker.stop()
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=getattr(logging, str(args.log_level).upper(), logging.WARNING),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return asyncio.run(serve(args))
    except KeyboardInterrupt:
        return 0
