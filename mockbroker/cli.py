"""The `mockbroker` command (also `python -m mockbroker`): run a broker until SIGINT/SIGTERM.

    mockbroker --port 9092 --topic orders:3 --topic payments
    mockbroker --brokers 3 --port 9092        (nodes 1, 2, 3 on 9092, 9093, 9094)
    mockbroker serve ...                      (the same)
    mockbroker --listener INTERNAL://0.0.0.0:29092 --listener EXTERNAL://0.0.0.0:9092 \\
               --advertised-listener INTERNAL://kafka:29092 --advertised-listener EXTERNAL://localhost:9092
    mockbroker healthcheck [--bootstrap HOST:PORT]   (exit 0 if the broker answers, else 1)

Configured from the environment too, as the Kafka images are (KAFKA_LISTENERS, KAFKA_ADVERTISED_LISTENERS,
KAFKA_NODE_ID, KAFKA_CFG_*, KAFKA_CREATE_TOPICS, MOCKBROKER_TOPICS, ...: see mockbroker/envconfig.py);
flags win over the environment; --no-env ignores it.

Prints one line with the bound (and advertised) addresses once the broker accepts connections, then,
when the control endpoint is on, a second line with its URL. A configuration that cannot work exits
with code 2 and one message; an address that cannot be bound, with code 1.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from typing import TYPE_CHECKING

from mockbroker.envconfig import BrokerSettings, ConfigError, Flags, build_settings, describe

if TYPE_CHECKING:
    from mockbroker.server import MockBroker

log = logging.getLogger("mockbroker.cli")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="mockbroker",
        description="A Kafka-compatible broker for tests. Subcommands: serve (the default), healthcheck.",
        epilog="Environment: KAFKA_* / KAFKA_CFG_* settings as the Kafka images read them, CLUSTER_ID, "
               "KAFKA_CREATE_TOPICS, MOCKBROKER_TOPICS, MOCKBROKER_HTTP_PORT, MOCKBROKER_HOST, "
               "MOCKBROKER_LOG_LEVEL (see docker/README.md). Flags win over the environment.",
    )
    p.add_argument("--host", help="address to bind (default 127.0.0.1, or MOCKBROKER_HOST)")
    p.add_argument("--port", type=int, help="port to bind; 0 picks a free one (default 9092)")
    p.add_argument("--advertised-host", help="host that Metadata advertises (default: the bind host)")
    p.add_argument("--advertised-port", type=int, help="port that Metadata advertises (default: the bound port)")
    p.add_argument("--listener", action="append", default=[], metavar="NAME://HOST:PORT",
                   help="a named listener to bind, as Kafka's listeners setting (repeatable)")
    p.add_argument("--advertised-listener", action="append", default=[], metavar="NAME://HOST:PORT",
                   help="what Metadata advertises to clients of listener NAME (repeatable)")
    p.add_argument("--node-id", type=int, help="this broker's node id (default 1)")
    p.add_argument("--brokers", type=int, help="nodes to run in this process (default 1; MOCKBROKER_BROKERS): ids "
                   "node-id, node-id+1, ...; each its own listeners, on the next ports (port 0: free ones)")
    p.add_argument("--cluster-id", help="cluster id (default: random)")
    p.add_argument("--partitions", type=int, help="partitions of auto-created topics (default 1)")
    p.add_argument("--topic", action="append", default=[], metavar="NAME[:PARTITIONS]",
                   help="create a topic at start (repeatable)")
    p.add_argument("--no-auto-create", action="store_true", help="disable auto topic creation")
    p.add_argument("--config", action="append", default=[], metavar="KEY=VALUE",
                   help="a broker setting in Kafka's name, e.g. log.retention.ms=60000 (repeatable)")
    p.add_argument("--http-port", type=int, help="serve the HTTP control endpoint on this port (0: a free one)")
    p.add_argument("--http-host", help="address of the control endpoint (default: the --host / MOCKBROKER_HOST)")
    p.add_argument("--no-env", action="store_true", help="ignore KAFKA_* / MOCKBROKER_* environment variables")
    p.add_argument("--log-level", help="DEBUG, INFO, WARNING (default), ERROR")
    return p


def flags_from_args(args: argparse.Namespace) -> Flags:
    return Flags(
        host=args.host, port=args.port, advertised_host=args.advertised_host, advertised_port=args.advertised_port,
        listeners=list(args.listener), advertised_listeners=list(args.advertised_listener),
        node_id=args.node_id, cluster_id=args.cluster_id, partitions=args.partitions,
        auto_create=False if args.no_auto_create else None, config=list(args.config), topics=list(args.topic),
        http_host=args.http_host, http_port=args.http_port, log_level=args.log_level, brokers=args.brokers,
    )


def parse_topic(spec: str) -> tuple[str, int]:
    name, _, parts = spec.partition(":")
    return name, int(parts) if parts else -1


def listening_line(broker: MockBroker) -> str:
    """"mockbroker listening on HOST:PORT" (the bound address), plus the advertised one if different; every
    listener of every node, in node order."""
    parts = []
    for lst in broker.cluster.listeners:
        bound = f"{lst.host}:{lst.port}"
        public = f"{lst.public_host}:{lst.public_port}"
        parts.append(bound if bound == public else f"{bound} (advertised as {public})")
    return "mockbroker listening on " + ", ".join(parts)


def _fail(message: str, code: int) -> int:
    print(f"mockbroker: {message}", file=sys.stderr, flush=True)
    return code


async def serve(settings: BrokerSettings) -> int:
    from mockbroker.errors import KafkaError
    from mockbroker.server import MockBroker

    try:
        broker = MockBroker(**settings.broker_kwargs())
    except KafkaError as exc:
        return _fail(f"bad setting: {exc.message or exc}", 2)
    if settings.rack is not None:
        broker.cluster.nodes[settings.node_id].rack = settings.rack
    for spec in settings.topics:
        try:
            broker.cluster.create_topic(spec.name, spec.partitions, spec.replication_factor, dict(spec.config))
        except KafkaError as exc:
            return _fail(f"cannot create topic {spec.name} (from {spec.origin}): {exc.message or exc}", 2)
    try:
        await broker.start()
    except OSError as exc:
        await broker.stop()
        where = ", ".join(f"{s.name} {s.host}:{s.port}" for s in settings.listeners)
        return _fail(f"cannot listen on {where}: {exc}", 1)
    control = None
    if settings.http_port is not None:
        from mockbroker.control_http import ControlServer

        try:
            control = await ControlServer(broker).start(settings.http_host, settings.http_port)
        except OSError as exc:
            await broker.stop()
            return _fail(f"cannot serve the control endpoint on {settings.http_host}:{settings.http_port}: {exc}", 1)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):
            pass
    print(listening_line(broker), flush=True)
    if control is not None:
        print(f"mockbroker control endpoint on {control.url}", flush=True)
    await stop.wait()
    if control is not None:
        await control.stop()
    await broker.stop()
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "healthcheck":
        from mockbroker.healthcheck import main as healthcheck_main

        return healthcheck_main(argv[1:])
    if argv and argv[0] == "serve":
        argv = argv[1:]
    args = build_parser().parse_args(argv)
    try:
        settings = build_settings({} if args.no_env else os.environ, flags_from_args(args))
    except ConfigError as exc:
        return _fail(str(exc), 2)
    logging.basicConfig(level=getattr(logging, settings.log_level, logging.WARNING),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    line = settings.unknown_line()
    if line is not None:
        log.warning("%s", line)
    for warning in settings.warnings:
        log.warning("%s", warning)
    for text in describe(settings):
        log.info("%s", text)
    try:
        return asyncio.run(serve(settings))
    except KeyboardInterrupt:
        return 0
