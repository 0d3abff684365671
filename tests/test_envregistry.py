"""The Schema Registry's settings from the environment (mockbroker/envregistry.py): cp-schema-registry's variable
names where they apply, the image's MOCKBROKER_SCHEMA_REGISTRY_PORT, the flag over both; and what the command
does with them on a registry (registry/runner.py's configure). No Docker, no sockets."""

from __future__ import annotations

import pytest

from mockbroker.envconfig import ConfigError, Flags, build_settings
from mockbroker.envregistry import LEVELS, RegistrySettings
from mockbroker.registry.http import RegistryServer
from mockbroker.registry.model import LEVELS as MODEL_LEVELS
from mockbroker.registry.model import RegistryError, SchemaRegistry
from mockbroker.registry.rebuild import replay
from mockbroker.registry.runner import configure
from mockbroker.registry.store import encode


def registry(env: dict[str, str], flags: Flags | None = None) -> tuple[int | None, RegistrySettings]:
    s = build_settings(env, flags)
    return s.schema_registry_port, s.registry


def test_no_variable_no_registry_and_confluents_defaults() -> None:
    assert registry({}) == (None, RegistrySettings(None, True))


def test_the_listener_gives_the_port_and_wins_over_the_images_port() -> None:
    assert registry({"SCHEMA_REGISTRY_LISTENERS": "http://0.0.0.0:8085"})[0] == 8085
    assert registry({"SCHEMA_REGISTRY_LISTENERS": "https://[::]:8443/"})[0] == 8443
    assert registry({"MOCKBROKER_SCHEMA_REGISTRY_PORT": "8081"})[0] == 8081
    both = {"MOCKBROKER_SCHEMA_REGISTRY_PORT": "8081", "SCHEMA_REGISTRY_LISTENERS": "http://0.0.0.0:18081"}
    assert registry(both)[0] == 18081
    assert registry(both, Flags(schema_registry_port=9999))[0] == 9999  # the flag wins over both
    assert registry({"MOCKBROKER_SCHEMA_REGISTRY_PORT": ""})[0] is None  # blank: no registry (the image's off switch)
    assert build_settings(both).broker_kwargs()["schema_registry"] == 18081


def test_the_compatibility_level_and_its_deprecated_avro_spelling() -> None:
    assert registry({"SCHEMA_REGISTRY_SCHEMA_COMPATIBILITY_LEVEL": "full_transitive"})[1].compatibility == \
        "FULL_TRANSITIVE"
    assert registry({"SCHEMA_REGISTRY_AVRO_COMPATIBILITY_LEVEL": "Forward"})[1].compatibility == "FORWARD"
    # Confluent's SchemaRegistryConfig reads avro.compatibility.level first when it is given
    both = {"SCHEMA_REGISTRY_SCHEMA_COMPATIBILITY_LEVEL": "none", "SCHEMA_REGISTRY_AVRO_COMPATIBILITY_LEVEL": "full"}
    assert registry(both)[1].compatibility == "FULL"
    assert LEVELS == MODEL_LEVELS


def test_mode_mutability_and_the_accepted_variables() -> None:
    assert registry({"SCHEMA_REGISTRY_MODE_MUTABILITY": "FALSE"})[1].mode_mutability is False
    assert registry({"SCHEMA_REGISTRY_MODE_MUTABILITY": "true"})[1].mode_mutability is True
    s = build_settings({"SCHEMA_REGISTRY_HOST_NAME": "schema-registry", "SCHEMA_REGISTRY_KAFKASTORE_TOPIC": "_schemas",
                        "SCHEMA_REGISTRY_KAFKASTORE_BOOTSTRAP_SERVERS": "PLAINTEXT://kafka:9092"})
    assert s.unknown == {} and s.config == {}  # none of them is a broker setting


@pytest.mark.parametrize(("var", "value", "said"), [
    ("SCHEMA_REGISTRY_LISTENERS", "http://a:1,http://b:2", "give one listener"),
    ("SCHEMA_REGISTRY_LISTENERS", "ftp://0.0.0.0:21", "not http://HOST:PORT"),
    ("SCHEMA_REGISTRY_LISTENERS", "http://0.0.0.0:70000", "out of range"),
    ("SCHEMA_REGISTRY_SCHEMA_COMPATIBILITY_LEVEL", "sideways", "unknown compatibility level"),
    ("SCHEMA_REGISTRY_MODE_MUTABILITY", "yes", "must be true or false"),
    ("SCHEMA_REGISTRY_KAFKASTORE_TOPIC", "_my_schemas", "in the _schemas topic only"),
])
def test_a_bad_value_is_one_message_naming_its_variable(var: str, value: str, said: str) -> None:
    with pytest.raises(ConfigError) as info:
        build_settings({var: value})
    assert str(info.value).startswith(f"{var}={value!r}: ") and said in str(info.value)


def test_configure_sets_the_default_level_which_a_stored_global_level_overrides() -> None:
    server = RegistryServer(SchemaRegistry())
    configure(server, "FULL", True, "none")
    assert server.registry.compatibility_of(None) == "FULL" and server.api.auth == "none"
    server.registry.set_compatibility(None, "NONE")
    assert server.registry.compatibility_of("s") == "NONE"
    assert server.registry.delete_compatibility(None) == "NONE"
    assert server.registry.compatibility_of(None) == "FULL"  # DELETE /config: back to the configured default
    # a global level read back from `_schemas` wins over the configured default, as Confluent's stored config does
    written = SchemaRegistry()
    written.set_compatibility(None, "FORWARD")
    again = SchemaRegistry()
    replay(again, [encode(record) for record in written.journal])
    restarted = RegistryServer(again)
    configure(restarted, "FULL", True, "basic")
    assert restarted.registry.compatibility_of(None) == "FORWARD"


def test_an_immutable_mode_refuses_every_mode_change_with_42205() -> None:
    server = RegistryServer(SchemaRegistry())
    configure(server, None, False, "basic")
    for change in (lambda r: r.set_mode(None, "READONLY"), lambda r: r.set_mode("s", "IMPORT"),
                   lambda r: r.delete_mode("s")):
        with pytest.raises(RegistryError) as info:
            change(server.registry)
        assert (info.value.status, info.value.code, info.value.message) == (422, 42205, "Mode changes are not allowed")
    assert server.registry.mode_of(None) == "READWRITE" and server.registry.journal == []
