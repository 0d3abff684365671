"""Kafka version personas (mockbroker/personas.py): the table each release plays, and raw-protocol checks
that ApiVersions advertises the release's versions and that a request above them closes the connection
as any unsupported version does."""

from __future__ import annotations

import pytest

from mockbroker.dispatch import supported_versions
from mockbroker.personas import KAFKA_VERSIONS, Persona, make_persona
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.release_versions import RELEASE_VERSIONS
from mockbroker.server import MockBroker
from mockbroker.settings import make_settings
from tests.handlers.conftest import API_VERSIONS, METADATA, PRODUCE
from tests.rawclient import RawClient

V3 = {"client_software_name": "mockbroker-tests", "client_software_version": "1.0"}


def advertised(client: RawClient, version: int = 3) -> dict[int, tuple[int, int]]:
    resp = client.request(API_VERSIONS, version, V3)
    assert resp.error_code == ErrorCode.NONE
    return {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}


# -- the table --------------------------------------------------------------------------------------


def test_every_release_of_the_data_is_a_persona() -> None:
    assert KAFKA_VERSIONS == tuple(RELEASE_VERSIONS)
    assert "2.8" in KAFKA_VERSIONS and "4.3" in KAFKA_VERSIONS


def test_no_persona_serves_everything_the_registry_serves() -> None:
    assert supported_versions(Persona()) == supported_versions()


def test_4_3_advertises_the_served_keys_and_maxima_with_4_3_floors() -> None:
    full = {k: (lo, hi) for k, lo, hi in supported_versions()}
    p43 = {k: (lo, hi) for k, lo, hi in supported_versions(make_persona("4.3", None))}
    assert set(p43) == set(full)
    assert {k: hi for k, (_, hi) in p43.items()} == {k: hi for k, (_, hi) in full.items()}
    assert p43[PRODUCE] == (3, 13) and p43[1] == (4, 18) and p43[8] == (2, 10)  # what 4.0 removed stays out


def test_2_8_has_no_kip_848_and_older_maxima() -> None:
    p28 = {k: (lo, hi) for k, lo, hi in supported_versions(make_persona("2.8", None))}
    assert 68 not in p28 and 69 not in p28 and 75 not in p28 and 65 not in p28
    assert p28[PRODUCE] == (0, 9)
    assert p28[API_VERSIONS] == (0, 3)
    assert p28[METADATA] == (0, 11)


def test_kip_848_apis_appear_only_from_4_0() -> None:
    assert 68 not in dict((k, 0) for k, _, _ in supported_versions(make_persona("3.9", None)))
    assert 68 in dict((k, 0) for k, _, _ in supported_versions(make_persona("4.1", None)))
    assert 68 in dict((k, 0) for k, _, _ in supported_versions(make_persona("4.3", None)))
    assert make_persona("4.1", None).transaction_version is None  # TV2 by default from 4.0


def test_4_0_and_4_2_are_personas_with_their_flags() -> None:
    p40, p41, p42 = (make_persona(v, None) for v in ("4.0", "4.1", "4.2"))
    assert p40.kip848 and p40.transaction_version is None and p40.leader_hints  # KIP-848 GA, TV2 on
    assert not make_persona("3.9", None).kip848
    assert not p40.share_groups and not p41.share_groups and p42.share_groups  # share groups GA in 4.2


def test_patch_releases_name_their_minor() -> None:
    assert make_persona("3.7.1", None).kafka_version == "3.7"


@pytest.mark.parametrize("bad", ["4.4", "5.0", "2.7", "five", "3.7.1.2", ""])
def test_a_release_without_data_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="kafka_version must be one of"):
        make_settings(kafka_version=bad)


def test_max_versions_caps_one_api() -> None:
    p = make_persona(None, {PRODUCE: 7})
    got = {k: (lo, hi) for k, lo, hi in supported_versions(p)}
    assert got[PRODUCE] == (0, 7)
    assert got[METADATA] == dict((k, (lo, hi)) for k, lo, hi in supported_versions())[METADATA]


def test_a_cap_below_the_floor_leaves_the_api_out() -> None:
    assert PRODUCE not in {k for k, _, _ in supported_versions(make_persona("4.3", {PRODUCE: 2}))}


def test_transaction_version_defaults_from_the_release_and_an_explicit_setting_wins() -> None:
    assert make_settings(kafka_version="3.9").config["transaction.version"] == 0
    assert "transaction.version" not in make_settings(kafka_version="4.3").config
    assert make_settings(kafka_version="3.9", config={"transaction.version": 2}).config["transaction.version"] == 2


# -- on the wire ------------------------------------------------------------------------------------


@pytest.mark.mockbroker(kafka_version="2.8")
def test_2_8_apiversions_differs_from_4_3(mockbroker: MockBroker, mockbroker_factory: object) -> None:
    with RawClient(mockbroker.host, mockbroker.port) as c:
        old = advertised(c)
    new_broker = mockbroker_factory(kafka_version="4.3")  # type: ignore[operator]
    with RawClient(new_broker.host, new_broker.port) as c:
        new = advertised(c)
    assert old[PRODUCE] == (0, 9) and new[PRODUCE] == (3, 13)
    assert 68 not in old and 68 in new
    assert old == {k: (lo, hi) for k, lo, hi in supported_versions(make_persona("2.8", None))}


@pytest.mark.parametrize("kafka_version", ["4.0", "4.2"])
def test_4_0_and_4_2_on_the_wire(mockbroker_factory: object, kafka_version: str) -> None:
    """4.0: KIP-848 and TV2 (Produce v12, EndTxn v5) without 4.1's Produce v13 and share APIs; 4.2: the share
    APIs and share.version, ListOffsets v11, without 4.3's DescribeLogDirs v5."""
    broker = mockbroker_factory(kafka_version=kafka_version)  # type: ignore[operator]
    with RawClient(broker.host, broker.port) as c:
        resp = c.request(API_VERSIONS, 4, V3)
        keys = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}
        features = [(f.name, f.max_version_level) for f in resp.finalized_features]
        telemetry = {71, 72}  # hidden while no client-metrics subscription turns telemetry on
        assert keys == {k: (lo, hi) for k, lo, hi in supported_versions(make_persona(kafka_version, None))
                        if k not in telemetry}
        assert keys[68] == (0, 1) and ("transaction.version", 2) in features
        if kafka_version == "4.0":
            assert keys[PRODUCE] == (3, 12) and keys[26] == (0, 5) and keys[11] == (2, 9)
            assert not {76, 77, 78, 79, 90} & set(keys) and "share.version" not in dict(features)
            c.send(PRODUCE, 13, {"acks": 1, "timeout_ms": 1000, "topic_data": []})  # 4.1's version
            assert c.is_closed_by_peer()
        else:
            assert keys[PRODUCE] == (3, 13) and keys[2] == (1, 11) and keys[35] == (1, 4)
            assert (keys[76], keys[78], keys[90]) == ((1, 1), (1, 2), (0, 1)) and ("share.version", 1) in features


@pytest.mark.mockbroker(kafka_version="2.8")
def test_a_request_above_the_release_max_closes_the_connection(mockbroker: MockBroker) -> None:
    with RawClient(mockbroker.host, mockbroker.port) as c:
        assert c.request(METADATA, 11, {"topics": None}).controller_id >= -1  # served
        c.send(METADATA, 12, {"topics": None})  # Kafka 2.8 speaks Metadata up to v11
        assert c.is_closed_by_peer()


@pytest.mark.mockbroker(kafka_version="2.8")
def test_an_api_the_release_lacks_closes_the_connection(mockbroker: MockBroker) -> None:
    with RawClient(mockbroker.host, mockbroker.port) as c:
        c.send(68, 0, {"group_id": "g", "member_id": "m", "member_epoch": 0, "rebalance_timeout_ms": 1000,
                       "subscribed_topic_names": ["t"], "topic_partitions": []})
        assert c.is_closed_by_peer()


@pytest.mark.mockbroker(kafka_version="2.8")
def test_apiversions_above_the_release_answers_unsupported_with_its_range(mockbroker: MockBroker) -> None:
    with RawClient(mockbroker.host, mockbroker.port) as c:
        c.send(API_VERSIONS, 4, V3)  # 2.8 speaks ApiVersions v0-3
        _cid, resp = c.recv(API_VERSIONS, 0)
        assert resp.error_code == ErrorCode.UNSUPPORTED_VERSION
        assert [(k.api_key, k.min_version, k.max_version) for k in resp.api_keys] == [(API_VERSIONS, 0, 3)]
        assert advertised(c)[PRODUCE] == (0, 9)  # the client retries at a version it was told


@pytest.mark.mockbroker(max_versions={PRODUCE: 7})
def test_max_versions_on_the_wire(mockbroker: MockBroker) -> None:
    with RawClient(mockbroker.host, mockbroker.port) as c:
        assert advertised(c)[PRODUCE] == (0, 7)
        c.send(PRODUCE, 8, {"acks": 1, "timeout_ms": 1000, "topic_data": []})
        assert c.is_closed_by_peer()


@pytest.mark.parametrize(("kafka_version", "hinted"), [("3.6", False), ("3.7", True)])
def test_fetch_leader_hints_only_from_3_7(mockbroker_factory: object, kafka_version: str, hinted: bool) -> None:
    from tests.handlers.conftest import fetch
    broker: MockBroker = mockbroker_factory(brokers=2, kafka_version=kafka_version)  # type: ignore[operator]
    broker.create_topic("t", assignments=[[1, 2]])
    broker.move_leader("t", 0, 2)
    port = next(lst.port for lst in broker.cluster.listeners if lst.node_id == 2)
    with RawClient("127.0.0.1", port) as c:
        fenced = fetch(c, "t", current_leader_epoch=0, version=12)
    assert fenced.error_code == ErrorCode.FENCED_LEADER_EPOCH
    leader = fenced.current_leader
    assert ((leader.leader_id, leader.leader_epoch) == (2, 1)) is hinted
    if not hinted:
        assert (leader.leader_id, leader.leader_epoch) == (-1, -1)


# -- the command and the environment ----------------------------------------------------------------


def test_the_command_and_the_environment_pick_the_release() -> None:
    from mockbroker.cli import build_parser, flags_from_args
    from mockbroker.envconfig import Flags, build_settings, describe

    def persona_of(env: dict[str, str], flags: Flags | None = None) -> str | None:
        return build_settings(env, flags).broker_settings().persona.kafka_version

    assert persona_of({}) is None
    assert persona_of({"MOCKBROKER_KAFKA_VERSION": "3.5"}) == "3.5"
    assert persona_of({"MOCKBROKER_KAFKA_VERSION": "3.5"}, Flags(kafka_version="2.8")) == "2.8"  # the flag wins
    args = build_parser().parse_args(["--kafka-version", "3.9"])
    assert persona_of({}, flags_from_args(args)) == "3.9"
    assert "playing Kafka 3.9" in "\n".join(describe(build_settings({}, flags_from_args(args))))


def test_a_bad_kafka_version_is_one_line_naming_it(capsys: pytest.CaptureFixture[str]) -> None:
    from mockbroker.cli import build_parser
    from mockbroker.envconfig import ConfigError, build_settings

    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["--kafka-version", "4.4"])
    assert exc.value.code == 2
    assert "'4.4': the Kafka version must be one of 2.8, 3.0" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="MOCKBROKER_KAFKA_VERSION"):
        build_settings({"MOCKBROKER_KAFKA_VERSION": "1.0"})


def test_the_image_environment_variable_reaches_the_wire() -> None:
    """`MOCKBROKER_KAFKA_VERSION=2.8 mockbroker` (the image's way) advertises 2.8's versions."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith(("KAFKA_", "MOCKBROKER_"))}
    proc = subprocess.Popen([sys.executable, "-m", "mockbroker", "--port", "0"], env=env | {
        "MOCKBROKER_KAFKA_VERSION": "2.8"}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("mockbroker listening on "), line
        host, _, port = line.split()[3].rpartition(":")
        with RawClient(host, int(port)) as c:
            got = advertised(c)
        assert got[PRODUCE] == (0, 9) and 68 not in got
    finally:
        proc.terminate()
        proc.wait(timeout=10)
