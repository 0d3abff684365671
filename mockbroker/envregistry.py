"""The Schema Registry's settings from the environment: cp-schema-registry's variables where they apply,
read beside the broker's (mockbroker/envconfig.py calls `registry_settings`; the rows are in envtable.py).

confluentinc/cp-schema-registry takes every `schema-registry.properties` setting as SCHEMA_REGISTRY_<NAME>
(the same spelling rule as KAFKA_<NAME>). mockbroker reads these (anything else SCHEMA_REGISTRY_* is not
read, as it reads no other image's variables):

- SCHEMA_REGISTRY_LISTENERS (`listeners`, e.g. http://0.0.0.0:8081): the registry's port. One listener;
  http or https, the scheme following the broker (https when it has a TLS listener, with its certificate);
  the registry binds the host of the broker's first listener.
- SCHEMA_REGISTRY_SCHEMA_COMPATIBILITY_LEVEL (`schema.compatibility.level`) and its deprecated spelling
  SCHEMA_REGISTRY_AVRO_COMPATIBILITY_LEVEL (`avro.compatibility.level`, which wins when both are given, as in
  Confluent's SchemaRegistryConfig): the global level when none was set through PUT /config (default
  BACKWARD; DELETE /config goes back to it).
- SCHEMA_REGISTRY_MODE_MUTABILITY (`mode.mutability`, default true): false refuses PUT and DELETE /mode
  with 42205 "Mode changes are not allowed", as Confluent's registry does.
- SCHEMA_REGISTRY_KAFKASTORE_TOPIC (`kafkastore.topic`): only `_schemas` (the topic the registry keeps its
  records in); another name is an error rather than a silent difference.
- SCHEMA_REGISTRY_HOST_NAME, SCHEMA_REGISTRY_KAFKASTORE_BOOTSTRAP_SERVERS (which cp-schema-registry requires):
  accepted, no effect (the registry is in the broker's process, its store the broker itself).

MOCKBROKER_SCHEMA_REGISTRY_PORT (the image sets 8081; blank: no registry) gives the port when no listener
is given; --schema-registry-port wins over both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol

from mockbroker.envparsers import ConfigError, Setting

# Confluent's compatibility levels (registry/model.py's LEVELS; not imported, so reading the environment
# does not load the registry's schema libraries)
LEVELS = ("NONE", "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL", "FULL_TRANSITIVE")
TOPIC = "_schemas"
_LISTENER_RE = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?P<host>\[[^\]]*\]|[^:/\[\]]*):(?P<port>[0-9]+)/?")


@dataclass(frozen=True)
class RegistrySettings:
    """What the environment says of the Schema Registry beyond its port (see the module's docstring)."""
    compatibility: str | None = None  # the default global level; None: Confluent's default, BACKWARD
    mode_mutability: bool = True  # False: PUT/DELETE /mode refused with 42205


class _Props(Protocol):
    def setting(self, key: str) -> Setting | None: ...

    def value(self, key: str, default: Any = None) -> Any: ...


# -- the table's parsers (envtable.py) -----------------------------------------------------------------
def registry_listener(setting: Setting) -> int:
    """SCHEMA_REGISTRY_LISTENERS: one http:// or https:// listener -> its port."""
    items = [item.strip() for item in setting.value.split(",") if item.strip()]
    if len(items) != 1:
        raise ConfigError(f"{setting.origin}={setting.value!r}: give one listener, e.g. http://0.0.0.0:8081 "
                          "(mockbroker serves the registry on one port)")
    m = _LISTENER_RE.fullmatch(items[0])
    if m is None or m["scheme"].lower() not in ("http", "https"):
        raise ConfigError(f"{setting.origin}={setting.value!r}: not http://HOST:PORT or https://HOST:PORT")
    port = int(m["port"])
    if port > 65535:
        raise ConfigError(f"{setting.origin}={setting.value!r}: port {port} is out of range")
    return port


def compatibility_level(setting: Setting) -> str:
    level = setting.value.strip().upper()
    if level not in LEVELS:
        raise ConfigError(f"{setting.origin}={setting.value!r}: unknown compatibility level (one of "
                          f"{', '.join(level.lower() for level in LEVELS)})")
    return level


def boolean(setting: Setting) -> bool:
    value = setting.value.strip().lower()
    if value not in ("true", "false"):
        raise ConfigError(f"{setting.origin}={setting.value!r}: must be true or false")
    return value == "true"


def kafkastore_topic(setting: Setting) -> str:
    if setting.value.strip() != TOPIC:
        raise ConfigError(f"{setting.origin}={setting.value!r}: mockbroker keeps the registry in the {TOPIC} topic "
                          "only")
    return TOPIC


# -- resolving ---------------------------------------------------------------------------------------
def registry_settings(props: _Props) -> tuple[int | None, RegistrySettings]:
    """The registry's port (None: no registry) and its other settings: the flag's port, else the listener's,
    else MOCKBROKER_SCHEMA_REGISTRY_PORT's; ConfigError names a bad variable."""
    port_setting = props.setting("mockbroker.schema.registry.port")
    port: int | None = props.value("mockbroker.schema.registry.port")
    if props.setting("schema.registry.listeners") is not None and not (
            port_setting is not None and port_setting.origin.startswith("--")):
        port = props.value("schema.registry.listeners")
    props.value("schema.registry.kafkastore.topic")  # checked: _schemas only
    level = props.value("schema.registry.avro.compatibility.level") or props.value(
        "schema.registry.schema.compatibility.level")
    return port, RegistrySettings(level, props.value("schema.registry.mode.mutability", True))
