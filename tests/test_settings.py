"""The one settings object (mockbroker/settings.py): the command line (and the environment) and MockBroker's keyword
arguments give equal Settings for the same configuration, security included; the broker is made from it, keeps it
as broker.settings, and holds no second copy of any of its fields."""

from __future__ import annotations

import dataclasses

import pytest

from mockbroker.cli import build_parser, flags_from_args
from mockbroker.envconfig import build_settings
from mockbroker.server import MockBroker
from mockbroker.settings import Settings, TopicSpec, make_settings
from mockbroker.state.cluster.cluster import Listener


def command_settings(*argv: str, env: dict[str, str] | None = None) -> Settings:
    """The Settings the `mockbroker` command makes its broker from."""
    return build_settings(env or {}, flags_from_args(build_parser().parse_args(list(argv)))).broker_settings()


def test_the_command_and_the_python_api_give_equal_settings() -> None:
    command = command_settings("--port", "0", "--partitions", "3", "--user", "alice:pw", "--defaults", "test")
    python = MockBroker(port=0, partitions=3, users={"alice": "pw"}).settings
    assert command == python
    assert python.config["num.partitions"] == 3 and python.users == {"alice": "pw"}


def test_security_listeners_nodes_and_topics_take_the_same_route() -> None:
    command = command_settings(
        "--listener", "PLAIN://127.0.0.1:0", "--listener", "SECURE://127.0.0.1:0",
        "--security-protocol-map", "PLAIN:PLAINTEXT,SECURE:SASL_PLAINTEXT", "--user", "alice:pw",
        "--sasl-mechanisms", "scram-sha-512", "--brokers", "2", "--node-id", "4", "--cluster-id", "c1",
        "--no-auto-create", "--topic", "orders:2", "--config", "log.retention.ms=1000", "--defaults", "kafka",
        env={"KAFKA_BROKER_RACK": "r1", "KAFKA_AUTHORIZER_CLASS_NAME": "StandardAuthorizer"})
    python = MockBroker(
        listeners=[Listener("PLAIN", 4, "127.0.0.1", 0), Listener("SECURE", 4, "127.0.0.1", 0, None, None, "SASL_PLAINTEXT")],
        users={"alice": "pw"}, brokers=2, node_id=4, cluster_id="c1", auto_create_topics=False,
        topics=[TopicSpec("orders", 2, origin="--topic")], racks=["r1", None], defaults="kafka",
        config={"log.retention.ms": 1000, "sasl.enabled.mechanisms": "SCRAM-SHA-512",
                "authorizer.class.name": "StandardAuthorizer"}).settings
    assert command == python
    assert [lst.security_protocol for lst in python.listeners] == ["PLAINTEXT", "SASL_PLAINTEXT"]
    for settings in (command, python):  # and the broker made of it has that security
        broker = MockBroker.from_settings(settings)
        assert broker.security.mechanisms == ["SCRAM-SHA-512"] and broker.security.authorizer is not None
        assert broker.security.credentials.scram_credential("alice", "SCRAM-SHA-512") is not None
        assert [(lst.node_id, lst.name) for lst in broker.listeners] == [(4, "PLAIN"), (4, "SECURE"), (5, "PLAIN"),
                                                                         (5, "SECURE")]
        assert broker.cluster.topic("orders") is not None and broker.cluster.nodes[4].rack == "r1"


def test_the_broker_keeps_the_settings_and_no_second_copy_of_them() -> None:
    settings = make_settings(port=0, partitions=2, users={"bob": "pw"}, node_id=3)
    broker = MockBroker.from_settings(settings)
    assert broker.settings is settings
    fields = {f.name for f in dataclasses.fields(Settings)}
    assert not fields & set(vars(broker)), "MockBroker holds a setting beside broker.settings"
    assert broker.node_id == 3 and broker.cluster.config.get("num.partitions") == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        broker.settings.node_id = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        broker.settings = settings  # type: ignore[misc]


def test_the_broker_binds_copies_so_the_settings_never_change() -> None:
    given = Listener("PLAINTEXT", 1, "127.0.0.1", 0)
    with MockBroker(listeners=[given]).run_in_thread() as broker:
        assert broker.port != 0
        assert broker.settings.listeners == (Listener("PLAINTEXT", 1, "127.0.0.1", 0),)
        assert given.port == 0


def test_a_bad_value_fails_when_the_settings_are_made() -> None:
    from mockbroker.errors import KafkaError

    with pytest.raises(KafkaError, match="num.partitions"):
        make_settings(config={"num.partitions": "many"})
    with pytest.raises(ValueError, match="belongs to node 2"):
        make_settings(listeners=[Listener("PLAINTEXT", 2, "127.0.0.1", 0)])


def test_an_unknown_keyword_is_refused_as_by_a_signature() -> None:
    """MockBroker's keywords are one list (BrokerOptions): a misspelt one is a TypeError, not ignored."""
    with pytest.raises(TypeError, match="partitons"):
        MockBroker(partitons=3)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="brokerz"):
        make_settings(brokerz=2)  # type: ignore[call-arg]
