"""The `mockbroker` command (also `python -m mockbroker`): run a broker until SIGINT/SIGTERM.

    mockbroker --port 9092 --topic orders:3 --topic payments
    mockbroker --brokers 3 --port 9092        (nodes 1, 2, 3 on 9092, 9093, 9094)
    mockbroker serve ...                      (the same)
    mockbroker --listener INTERNAL://0.0.0.0:29092 --listener EXTERNAL://0.0.0.0:9092 \\
               --advertised-listener INTERNAL://kafka:29092 --advertised-listener EXTERNAL://localhost:9092
    mockbroker healthcheck [--bootstrap HOST:PORT]   (exit 0 if the broker answers, else 1)
    mockbroker --listener PLAINTEXT://127.0.0.1:9092 --listener SASL_SSL://127.0.0.1:9093 \\
               --user alice:secret --sasl-mechanisms SCRAM-SHA-512 --ssl-ca-out /tmp/ca.pem

Security (mockbroker/security): a listener named PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL uses that
protocol; other names take --security-protocol-map NAME:PROTOCOL,... (Kafka's
listener.security.protocol.map). Users come from --user NAME:PASSWORD; TLS listeners use a generated
CA unless --ssl-certfile/--ssl-keyfile or --ssl-keystore are given (--ssl-ca-out writes the CA's PEM).
Every flag and variable ends in envconfig.BrokerSettings, whose broker_settings() is the broker's one settings
object (mockbroker/settings.py, security included) that MockBroker.from_settings makes the broker of; nothing here
changes the broker after it is made.

Configured from the environment too, as the Kafka images are (KAFKA_LISTENERS, KAFKA_ADVERTISED_LISTENERS,
KAFKA_NODE_ID, KAFKA_CFG_*, KAFKA_CREATE_TOPICS, MOCKBROKER_TOPICS, ...: see mockbroker/envconfig.py);
flags win over the environment; --no-env ignores it.

Prints one line with the bound (and advertised) addresses once the broker accepts connections, then,
when the control endpoint is on, a second line with its URL. A flag, variable or configuration that cannot
work exits with code 2 and one line naming it (no usage block: that is --help's; mockbroker/cliargs.py); an
address that cannot be bound, with code 1 and one line naming it.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from typing import TYPE_CHECKING

from mockbroker.cliargs import Choice, ExistingFile, IntRange, NewFile, Parser
from mockbroker.envconfig import BrokerSettings, ConfigError, Flags, build_settings, describe
from mockbroker.envparsers import LOG_LEVELS
from mockbroker.event_loop import CHOICES, choose, loop_factory, loop_name
from mockbroker.event_loop import run as run_loop
from mockbroker.personas import KAFKA_VERSIONS

if TYPE_CHECKING:
    from mockbroker.security.tls import TlsConfig
    from mockbroker.server import MockBroker

log = logging.getLogger("mockbroker.cli")


INT_MAX = 2**31 - 1


PORT = IntRange("a port", 0, 65535)


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="mockbroker",
        description="A Kafka-compatible broker for tests. Subcommands: serve (the default), healthcheck.",
        epilog="Environment: KAFKA_* / KAFKA_CFG_* settings as the Kafka images read them, CLUSTER_ID, "
               "KAFKA_CREATE_TOPICS, MOCKBROKER_TOPICS, MOCKBROKER_HTTP_PORT, MOCKBROKER_HOST, "
               "MOCKBROKER_LOG_LEVEL, MOCKBROKER_DEFAULTS, MOCKBROKER_KAFKA_VERSION, MOCKBROKER_SEED; SASL users from KAFKA_CLIENT_USERS/_PASSWORDS, JAAS "
               "(KAFKA_SASL_JAAS_CONFIG, KAFKA_LISTENER_NAME_<L>_<MECH>_SASL_JAAS_CONFIG, KAFKA_OPTS="
               "-Djava.security.auth.login.config=FILE) and MOCKBROKER_SCRAM_CREDENTIALS (see docker/README.md). "
               "Flags win over the environment.",
    )
    p.add_argument("--host", help="address to bind (default 127.0.0.1, or MOCKBROKER_HOST)")
    p.add_argument("--port", type=PORT, help="port to bind; 0 picks a free one (default 9092)")
    p.add_argument("--advertised-host", help="host that Metadata advertises (default: the bind host)")
    p.add_argument("--advertised-port", type=IntRange("an advertised port", 1, 65535),
                   help="port that Metadata advertises (default: the bound port)")
    p.add_argument("--listener", action="append", default=[], metavar="NAME://HOST:PORT",
                   help="a named listener to bind, as Kafka's listeners setting (repeatable)")
    p.add_argument("--advertised-listener", action="append", default=[], metavar="NAME://HOST:PORT",
                   help="what Metadata advertises to clients of listener NAME (repeatable)")
    p.add_argument("--node-id", type=IntRange("a node id", 0, INT_MAX), help="this broker's node id (default 1)")
    p.add_argument("--brokers", type=IntRange("the broker count", 1, 64),
                   help="nodes to run in this process (default 1; MOCKBROKER_BROKERS): ids node-id, node-id+1, "
                        "...; each its own listeners, on the next ports (port 0: free ones)")
    p.add_argument("--cluster-id", help="cluster id (default: random)")
    p.add_argument("--partitions", type=IntRange("a partition count", 1, INT_MAX),
                   help="partitions of auto-created topics (default 1)")
    p.add_argument("--topic", action="append", default=[], metavar="NAME[:PARTITIONS]",
                   help="create a topic at start (repeatable)")
    p.add_argument("--no-auto-create", action="store_true", help="disable auto topic creation")
    p.add_argument("--data-dir", metavar="DIR", help="keep the logs in DIR in Kafka's layout and load them at start "
                   "(KAFKA_LOG_DIRS / log.dirs; default: in memory only)")
    p.add_argument("--config", action="append", default=[], metavar="KEY=VALUE",
                   help="a broker setting in Kafka's name, e.g. log.retention.ms=60000 (repeatable)")
    p.add_argument("--http-port", type=IntRange("the HTTP port", 0, 65535),
                   help="serve the HTTP control endpoint on this port (0: a free one)")
    p.add_argument("--schema-registry-port", type=IntRange("the Schema Registry port", 0, 65535),
                   help="serve a Schema Registry (Confluent's REST API, Avro) on this port (0: a free one)")
    p.add_argument("--http-host", help="address of the control endpoint (default: the --host / MOCKBROKER_HOST)")
    p.add_argument("--http-auth", type=Choice("the HTTP auth", ("basic", "none")), metavar="{basic,none}",
                   help="basic (default): when the broker has SASL users, the control endpoint, console and Schema "
                        "Registry want HTTP Basic credentials of one of them (the endpoint follows the ACLs); none: "
                        "open (MOCKBROKER_HTTP_AUTH)")
    p.add_argument("--no-env", action="store_true", help="ignore KAFKA_* / MOCKBROKER_* environment variables")
    p.add_argument("--log-level", type=Choice("the log level", LOG_LEVELS), metavar="LEVEL",
                   help="DEBUG, INFO, WARNING (default), ERROR, CRITICAL")
    p.add_argument("--defaults", type=Choice("the defaults", ("kafka", "test")), metavar="{kafka,test}",
                   help="kafka (default): Kafka's defaults; test: the test defaults, group.initial.rebalance.delay.ms=0 "
                        "(MOCKBROKER_DEFAULTS; the image's). Explicit settings win either way")
    p.add_argument("--kafka-version", type=Choice("the Kafka version", KAFKA_VERSIONS), metavar="VERSION",
                   help=f"play that Kafka release: its API versions and behaviours ({', '.join(KAFKA_VERSIONS)}; "
                        "MOCKBROKER_KAFKA_VERSION; default: every version mockbroker serves)")
    p.add_argument("--seed", type=IntRange("a seed", 0, 2**64 - 1), metavar="N",
                   help="every random choice of the broker (cluster id, topic and member ids...) comes from it "
                        "(MOCKBROKER_SEED; default: a fresh one, logged at INFO)")
    p.add_argument("--loop", type=Choice("the event loop", CHOICES), metavar="{auto,uvloop,asyncio}",
                   help="auto (default): uvloop when installed (the fast extra), else asyncio's own loop "
                        "(MOCKBROKER_LOOP; mockbroker/event_loop.py)")
    sec = p.add_argument_group("security")
    sec.add_argument("--security-protocol-map", metavar="NAME:PROTOCOL,...",
                     help="the security protocol of each --listener (default: a listener named after a protocol "
                          "uses it): PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL")
    sec.add_argument("--user", action="append", default=[], metavar="NAME:PASSWORD",
                     help="a user who may log in with every enabled SASL mechanism (repeatable)")
    sec.add_argument("--sasl-mechanisms", metavar="M1,M2",
                     help="enabled SASL mechanisms (default PLAIN,SCRAM-SHA-256,SCRAM-SHA-512)")
    sec.add_argument("--ssl-certfile", type=ExistingFile(), help="PEM server certificate (chain) of the TLS listeners")
    sec.add_argument("--ssl-keyfile", type=ExistingFile(), help="PEM private key of --ssl-certfile")
    sec.add_argument("--ssl-key-password", help="password of --ssl-keyfile")
    sec.add_argument("--ssl-keystore", type=ExistingFile(), help="PKCS12 keystore instead of --ssl-certfile/--ssl-keyfile")
    sec.add_argument("--ssl-keystore-password")
    sec.add_argument("--ssl-cafile", type=ExistingFile(), help="PEM CAs trusted for client certificates (mTLS)")
    sec.add_argument("--ssl-truststore", type=ExistingFile(), help="PKCS12 truststore instead of --ssl-cafile")
    sec.add_argument("--ssl-truststore-password")
    sec.add_argument("--ssl-client-auth", type=Choice("ssl.client.auth", ("none", "requested", "required")),
                     metavar="{none,requested,required}", help="Kafka's ssl.client.auth (default none)")
    sec.add_argument("--ssl-ca-out", metavar="PATH", type=NewFile(),
                     help="write the CA certificate clients should trust here")
    return p


def flags_from_args(args: argparse.Namespace) -> Flags:
    return Flags(
        host=args.host, port=args.port, advertised_host=args.advertised_host, advertised_port=args.advertised_port,
        listeners=list(args.listener), advertised_listeners=list(args.advertised_listener),
        node_id=args.node_id, cluster_id=args.cluster_id, partitions=args.partitions,
        auto_create=False if args.no_auto_create else None, config=list(args.config), topics=list(args.topic),
        http_host=args.http_host, http_port=args.http_port, http_auth=args.http_auth, log_level=args.log_level, brokers=args.brokers,
        data_dir=args.data_dir, defaults=args.defaults, kafka_version=args.kafka_version, users=list(args.user),
        seed=args.seed,
        security_protocol_map=args.security_protocol_map, sasl_mechanisms=args.sasl_mechanisms,
        schema_registry_port=args.schema_registry_port,
        tls=tls_flags(args), ssl_ca_out=args.ssl_ca_out,
    )


def tls_flags(args: argparse.Namespace) -> TlsConfig | None:
    """The TLS key material and client auth of the --ssl-* flags (None: none given)."""
    given = (args.ssl_certfile, args.ssl_keyfile, args.ssl_keystore, args.ssl_cafile, args.ssl_truststore,
             args.ssl_client_auth)
    if all(flag is None for flag in given):
        return None
    from mockbroker.security.tls import TlsConfig

    return TlsConfig(certfile=args.ssl_certfile, keyfile=args.ssl_keyfile, key_password=args.ssl_key_password,
                     keystore=args.ssl_keystore, keystore_password=args.ssl_keystore_password, cafile=args.ssl_cafile,
                     truststore=args.ssl_truststore, truststore_password=args.ssl_truststore_password,
                     client_auth=args.ssl_client_auth or "none")


def parse_topic(spec: str) -> tuple[str, int]:
    name, _, parts = spec.partition(":")
    return name, int(parts) if parts else -1


def listening_line(broker: MockBroker) -> str:
    """"mockbroker listening on HOST:PORT" (the bound address), plus the advertised one if different; every
    listener of every node, in node order."""
    parts = []
    for lst in broker.listeners:
        bound = f"{lst.host}:{lst.port}"
        public = f"{lst.public_host}:{lst.public_port}"
        shown = bound if bound == public else f"{bound} (advertised as {public})"
        parts.append(shown if lst.security_protocol == "PLAINTEXT" else f"{shown} [{lst.security_protocol}]")
    return "mockbroker listening on " + ", ".join(parts)


def log_settings(settings: BrokerSettings) -> None:
    """The unknown settings (one WARNING line), the other warnings, and what the settings resolve to (INFO)."""
    line = settings.unknown_line()
    if line is not None:
        log.warning("%s", line)
    for warning in settings.warnings:
        log.warning("%s", warning)
    for text in describe(settings):
        log.info("%s", text)


def bind_error(broker: MockBroker, exc: OSError) -> str:
    """One line naming the listener that could not be bound (asyncio's message names its address) and why."""
    text = str(exc)
    failed = [lst for lst in broker.listeners if f"({lst.host!r}, {lst.port})" in text]
    why = text.rpartition("): ")[2] if failed else (exc.strerror or text)
    shown = failed or broker.listeners
    where = ", ".join(f"{lst.name} {lst.host}:{lst.port} (node {lst.node_id})" for lst in shown)
    return f"cannot listen on {where}: {why}"


# Kafka settings that name a file the broker reads at start: checked before starting, so the message names them.
FILE_SETTINGS = ("ssl.keystore.location", "ssl.truststore.location")


def check_files(settings: BrokerSettings) -> None:
    """ConfigError naming the variable or flag of a file setting whose file is missing, or of a CA output
    path that cannot be written."""
    for key in FILE_SETTINGS:
        path = settings.config.get(key, "").strip()
        if path and not os.path.isfile(path):
            raise ConfigError(f"{settings.origins.get(key, key)}={path!r}: no such file")
    if settings.ssl_ca_out is not None:
        try:
            NewFile()(settings.ssl_ca_out)
        except argparse.ArgumentTypeError as exc:
            raise ConfigError(f"MOCKBROKER_SSL_CA_OUT={exc}") from None


def _fail(message: str, code: int) -> int:
    print(f"mockbroker: {message}", file=sys.stderr, flush=True)
    return code


async def serve(settings: BrokerSettings) -> int:
    """Make the broker from `settings` alone (security and the topics to create included), start it, print
    its addresses, and serve until SIGINT/SIGTERM."""
    from mockbroker.errors import KafkaError
    from mockbroker.extras import MissingExtraError
    from mockbroker.gc_tuning import FreezeSurvivors, freeze_now
    from mockbroker.registry.runner import configure as configure_registry
    from mockbroker.server import MockBroker
    from mockbroker.storage import DataDirError

    if settings.http_port is not None:
        try:
            from mockbroker.control_http import ControlServer
        except MissingExtraError as exc:
            return _fail(str(exc), 2)
    try:
        broker = MockBroker.from_settings(settings.broker_settings())
    except KafkaError as exc:
        return _fail(f"bad setting: {exc.message or exc}", 2)
    except MissingExtraError as exc:
        return _fail(str(exc), 2)
    except DataDirError as exc:
        origin = settings.origins.get("log.dirs") or settings.origins.get("log.dir")
        return _fail(f"{origin}: {exc}" if origin else str(exc), 2)
    except (ValueError, OSError) as exc:
        return _fail(f"bad security setting: {exc}", 2)
    log_settings(settings)  # once the broker could be made: an error stays the only line
    log.info("seed %d: every random choice of the broker (replay with --seed %d)", broker.seed, broker.seed)
    try:
        await broker.start()
    except OSError as exc:
        await broker.stop()
        return _fail(bind_error(broker, exc), 1)
    # the registry's level, mode mutability and auth (--http-auth none opens it too), before an await lets a request in
    configure_registry(broker.schema_registry, settings.registry.compatibility, settings.registry.mode_mutability,
                       settings.http_auth)  # registry/runner.py
    control = None
    if settings.http_port is not None:
        try:
            control = await ControlServer(broker, auth=settings.http_auth).start(settings.http_host, settings.http_port)
        except OSError as exc:
            await broker.stop()
            return _fail(f"cannot serve the control endpoint on {settings.http_host}:{settings.http_port}: {exc}", 1)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    log.info("event loop: %s", loop_name(loop))
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):
            pass
    freeze_now()  # this process is the broker's: its modules and a data dir's logs out of collections,
    freezer = FreezeSurvivors(loop).install()  # and what survives later (mockbroker/gc_tuning.py)
    print(listening_line(broker), flush=True)
    if broker.schema_registry is not None:
        print(f"mockbroker schema registry on {broker.schema_registry_url}", flush=True)
    if any(lst.security_protocol in ("SSL", "SASL_SSL") for lst in broker.listeners) and broker.tls.ca_file:
        print(f"mockbroker TLS CA certificate in {settings.ssl_ca_out or broker.tls.ca_file}", flush=True)
    if control is not None:
        print(f"mockbroker control endpoint on {control.url}", flush=True)
    await stop.wait()
    freezer.uninstall()
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
        flags = flags_from_args(args)
    except ValueError as exc:  # TlsConfig's checks of the --ssl-* flags
        return _fail(f"--ssl-* flags: {exc}", 2)
    env = {} if args.no_env else os.environ
    try:
        settings = build_settings(env, flags)
        check_files(settings)
        factory = loop_factory(choose(args.loop, env))
    except ConfigError as exc:
        return _fail(str(exc), 2)
    logging.basicConfig(level=getattr(logging, settings.log_level, logging.WARNING),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return run_loop(serve(settings), factory)
    except KeyboardInterrupt:
        return 0
