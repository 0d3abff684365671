"""The parsers of the environment table (mockbroker/envconfig.py): a Setting in, a value out.

Each parser checks one variable's value and raises ConfigError with a message that names the variable
(or flag) it came from, so a compose file's mistake is one clear line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mockbroker.errors import KafkaError
from mockbroker.settings import TopicSpec
from mockbroker.state.cluster.cluster import validate_topic_name

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")

_LISTENER_RE = re.compile(r"(?P<name>[A-Za-z0-9_]+)://(?P<host>\[[^\]]*\]|[^:/\[\]]*):(?P<port>[0-9]+)")


class ConfigError(ValueError):
    """A configuration the broker cannot start with; the message says which variables and why."""


@dataclass(frozen=True)
class Setting:
    value: str
    origin: str  # the environment variable or flag it came from, for messages



def parse_listeners(setting: Setting, *, advertised: bool = False) -> list[tuple[str, str, int]]:
    """NAME://HOST:PORT,... -> [(NAME, host, port)] (names upper-cased, IPv6 brackets removed)."""
    out: list[tuple[str, str, int]] = []
    seen: set[str] = set()
    for item in setting.value.split(","):
        item = item.strip()
        if not item:
            continue
        m = _LISTENER_RE.fullmatch(item)
        if m is None:
            raise ConfigError(f"{setting.origin}: {item!r} is not NAME://HOST:PORT")
        name = m["name"].upper()
        host = m["host"]
        if host.startswith("["):
            host = host[1:-1]
        if not host and not advertised:
            host = "0.0.0.0"  # NAME://:PORT binds every interface
        port = int(m["port"])
        if port > 65535:
            raise ConfigError(f"{setting.origin}: {item!r}: port {port} is out of range")
        if name in seen:
            raise ConfigError(f"{setting.origin}: listener name {name} appears twice")
        if advertised and host in ("0.0.0.0", "::"):
            raise ConfigError(f"{setting.origin}: {item!r}: cannot advertise the non-routable address {host}")
        if advertised and port == 0:
            raise ConfigError(f"{setting.origin}: {item!r}: cannot advertise port 0")
        seen.add(name)
        out.append((name, host, port))
    if not out:
        raise ConfigError(f"{setting.origin} is empty")
    return out


def parse_protocol_map(setting: Setting) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in setting.value.split(","):
        item = item.strip()
        if not item:
            continue
        name, sep, proto = item.partition(":")
        name, proto = name.strip().upper(), proto.strip().upper()
        if not sep or not name or not proto:
            raise ConfigError(f"{setting.origin}: {item!r} is not NAME:PROTOCOL")
        if proto not in SECURITY_PROTOCOLS:
            raise ConfigError(f"{setting.origin}: {item!r} is not NAME:PROTOCOL: unknown security protocol {proto} "
                              f"(one of {', '.join(SECURITY_PROTOCOLS)})")
        if name in out and out[name] != proto:
            raise ConfigError(f"{setting.origin}: listener {name} is mapped twice")
        out[name] = proto
    return out


def parse_topics(value: str, origin: str, *, separator: str = ",", wurstmeister: bool = False) -> list[TopicSpec]:
    """MOCKBROKER_TOPICS / --topic: name[:partitions]; KAFKA_CREATE_TOPICS (wurstmeister):
    name:partitions:replicas[:cleanup.policy]."""
    out: list[TopicSpec] = []
    for item in value.split(separator):
        item = item.strip()
        if not item:
            continue
        parts = [p.strip() for p in item.split(":")]
        limit = 4 if wurstmeister else 2
        if len(parts) > limit:
            form = "name:partitions:replicas[:cleanup.policy]" if wurstmeister else "name[:partitions]"
            raise ConfigError(f"{origin}: {item!r} is not {form}")
        name = parts[0]
        try:
            validate_topic_name(name)
        except KafkaError as exc:
            raise ConfigError(f"{origin}: {item!r}: {exc.message}") from None
        partitions = _int(Setting(parts[1], origin), f"the partition count in {item!r}", 1) if len(parts) > 1 and parts[1] else -1
        replicas = _int(Setting(parts[2], origin), f"the replication factor in {item!r}", 1) if len(parts) > 2 and parts[2] else -1
        config: tuple[tuple[str, str], ...] = ()
        if len(parts) > 3 and parts[3]:
            config = (("cleanup.policy", parts[3]),)
        out.append(TopicSpec(name, partitions, replicas, config, origin))
    return out


# -- the table's parsers ------------------------------------------------------------------------


Parser = Callable[[Setting], Any]


def _int(setting: Setting, what: str, lo: int | None = None, hi: int | None = None) -> int:
    try:
        value = int(setting.value.strip())
    except ValueError:
        raise ConfigError(f"{setting.origin}={setting.value!r}: {what} must be an integer") from None
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        bounds = f"{lo}..{hi}" if hi is not None else f">= {lo}"
        raise ConfigError(f"{setting.origin}={setting.value!r}: {what} must be {bounds}")
    return value


class integer:  # noqa: N801 (a parser, named like the other parsers of the table)
    """A parser of whole numbers within [lo, hi]; the bounds are attributes so the error sweep
    (tests/test_cli_errors.py) makes its bad values from the table."""

    def __init__(self, what: str, lo: int | None = None, hi: int | None = None) -> None:
        self.what, self.lo, self.hi = what, lo, hi

    def __call__(self, setting: Setting) -> int:
        return _int(setting, self.what, self.lo, self.hi)


class choice:  # noqa: N801
    """A parser of one of `options` (case-insensitive; the option's own spelling out)."""

    def __init__(self, what: str, options: tuple[str, ...]) -> None:
        self.what, self.options = what, options

    def __call__(self, setting: Setting) -> str:
        value = setting.value.strip().lower()
        for option in self.options:
            if option.lower() == value:
                return option
        raise ConfigError(f"{setting.origin}={setting.value!r}: {self.what} must be one of {', '.join(self.options)}")


def text(setting: Setting) -> str:
    return setting.value


def names(setting: Setting) -> list[str]:
    """NAME,NAME,... -> upper-cased names."""
    return [n.strip().upper() for n in setting.value.split(",") if n.strip()]


def items(setting: Setting) -> list[str]:
    """a,b,... -> the items as written (user names: case kept)."""
    return [n.strip() for n in setting.value.split(",") if n.strip()]


def roles(setting: Setting) -> list[str]:
    """process.roles: broker and/or controller; a node without broker would serve no clients."""
    found = [r.strip().lower() for r in setting.value.split(",") if r.strip()]
    bad = [r for r in found if r not in ("broker", "controller")]
    if bad:
        raise ConfigError(f"{setting.origin}={setting.value!r}: unknown role(s) {', '.join(bad)} (broker, controller)")
    if "broker" not in found:
        raise ConfigError(f"{setting.origin}={setting.value!r}: this node would serve no clients; "
                          "mockbroker is a broker (use broker or broker,controller)")
    return found


log_level = choice("the log level", LOG_LEVELS)


def separator(setting: Setting) -> str:
    """KAFKA_CREATE_TOPICS_SEPARATOR: a compose file's way of writing a newline means a newline."""
    return "\n" if setting.value in ("$$'\\n'", "$'\\n'", "\\n") else setting.value


def accepted(setting: Setting) -> None:
    """Read and checked elsewhere or not at all: a setting of a multi-node cluster with no effect here."""
    return None


def jvm_options(setting: Setting) -> dict[str, str]:
    """KAFKA_OPTS: the JVM's -Dname=value system properties (other options are the JVM's own: ignored)."""
    import shlex

    try:
        words = shlex.split(setting.value)
    except ValueError as exc:
        raise ConfigError(f"{setting.origin}={setting.value!r}: {exc}") from None
    return dict(word[2:].partition("=")[::2] for word in words if word.startswith("-D") and len(word) > 2)


def scram_credentials(setting: Setting) -> str:
    """SCRAM-SHA-256=[name=NAME,password=PASSWORD] ... (kafka-storage format's --add-scram), checked here."""
    from mockbroker.security.settings import parse_scram_credentials

    try:
        parse_scram_credentials(setting.value)
    except ValueError as exc:
        raise ConfigError(f"{setting.origin}: {exc}") from None
    return setting.value


def bound_listeners(setting: Setting) -> list[tuple[str, str, int]]:
    return parse_listeners(setting)


def advertised_listeners(setting: Setting) -> list[tuple[str, str, int]]:
    return parse_listeners(setting, advertised=True)


def mockbroker_topics(setting: Setting) -> list[TopicSpec]:
    return parse_topics(setting.value, setting.origin)
