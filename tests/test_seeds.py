"""Seeded runs (issue #34 item 4): one scripted client session against two brokers of the same seed gets the
same answers (cluster id, topic ids, member ids, the leader, server-side assignments, which requests a
probabilistic fault rule hits); another seed gets different ones."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from mockbroker.protocol.errors import ErrorCode
from mockbroker.server import MockBroker
from mockbroker.settings import make_settings
from mockbroker.state.cluster.cluster import Cluster
from mockbroker.state.seeding import random_base64_id, random_uuid
from tests.docker.test_control_http import Api, api  # noqa: F401  (the api fixture)
from tests.rawclient import RawClient

pytest_plugins = ["pytester"]

METADATA, CREATE_TOPICS, JOIN, SYNC, PRODUCE, HEARTBEAT_848 = 3, 19, 11, 14, 0, 68
E = ErrorCode


def join_body(member_id: str = "") -> dict[str, Any]:
    return {"group_id": "classic", "session_timeout_ms": 30000, "rebalance_timeout_ms": 30000, "member_id": member_id,
            "group_instance_id": None, "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": b""}]}


def join_new(c: RawClient) -> Any:
    first = c.request(JOIN, 5, join_body())
    assert first.error_code == E.MEMBER_ID_REQUIRED
    return first.member_id


def produce_body(topic: str, partition: int) -> dict[str, Any]:
    from mockbroker.protocol.records.builder import build_batch

    batch = bytes(build_batch([(b"k", b"v")], base_timestamp=1))
    return {"transactional_id": None, "acks": 1, "timeout_ms": 5000, "topic_data": [
        {"name": topic, "partition_data": [{"index": partition, "records": batch}]}]}


def session(seed: int) -> dict[str, Any]:
    """The scripted session: every answer the broker chose, keyed by what it answers."""
    out: dict[str, Any] = {}
    with MockBroker(port=0, seed=seed).run_in_thread() as broker, \
            RawClient(broker.host, broker.port) as c1, RawClient(broker.host, broker.port) as c2:
        assert broker.seed == seed
        out["cluster_id"] = c1.request(METADATA, 12, {"topics": None}).cluster_id
        created = c1.request(CREATE_TOPICS, 7, {"topics": [
            {"name": n, "num_partitions": 3, "replication_factor": 1, "assignments": [], "configs": []}
            for n in ("orders", "events")], "timeout_ms": 5000, "validate_only": False})
        out["topic_ids"] = [t.topic_id for t in created.topics]
        # a classic group of two: ids and the leader are the broker's choice
        a = join_new(c1)
        joined_a = c1.request(JOIN, 5, join_body(a))
        c1.request(SYNC, 5, {"group_id": "classic", "generation_id": joined_a.generation_id, "member_id": a,
                             "protocol_type": "consumer", "protocol_name": "range",
                             "assignments": [{"member_id": a, "assignment": b"all"}]})
        b = join_new(c2)
        c2.send(JOIN, 5, join_body(b))  # parked until a rejoins
        broker.wait_for_group("classic", state="PreparingRebalance", members=2, timeout=30)
        ra = c1.request(JOIN, 5, join_body(a))
        _, rb = c2.recv(JOIN, 5)
        out["classic"] = (a, b, ra.leader, rb.leader, ra.generation_id, sorted(m.member_id for m in ra.members))
        # a KIP-848 group of two: member ids (ConsumerGroupHeartbeat v0: the broker's) and the assignment
        members: dict[RawClient, tuple[str, int, list[dict[str, Any]]]] = {c1: ("", 0, []), c2: ("", 0, [])}
        for _ in range(4):  # each member owns what it was last told, as a reconciling client does
            for c, (member_id, epoch, owned) in members.items():
                hb = c.request(HEARTBEAT_848, 0, {"group_id": "kip848", "member_id": member_id, "member_epoch": epoch,
                                                  "rebalance_timeout_ms": 30000, "subscribed_topic_names": ["orders"],
                                                  "topic_partitions": owned, "server_assignor": "uniform"})
                assert hb.error_code == E.NONE
                if hb.assignment is not None:
                    owned = [{"topic_id": t.topic_id, "partitions": list(t.partitions)}
                             for t in hb.assignment.topic_partitions]
                members[c] = (hb.member_id or member_id, hb.member_epoch, owned)
        groups = {g.group_id: g for g in broker.groups()}
        assigned = {m.member_id: m.assignment for m in groups["kip848"].members}
        out["kip848"] = [(member_id, assigned[member_id]) for member_id, _, _ in members.values()]  # in join order
        assert all(assigned.values())  # both hold partitions: the assignor's tie-breaks by member id showed
        # a fault rule that fires by chance, from the seed
        broker.inject(PRODUCE, error=E.NOT_LEADER_OR_FOLLOWER, count=1000, topic="events", probability=0.3)
        hits = []
        for i in range(30):
            resp = c1.request(PRODUCE, 9, produce_body("events", i % 3))
            hits.append(resp.responses[0].partition_responses[0].error_code == E.NOT_LEADER_OR_FOLLOWER)
        out["fault_hits"] = hits
    return out


def test_the_same_seed_and_session_give_the_same_answers_and_another_seed_others() -> None:
    first, again, other = session(1234), session(1234), session(99)
    assert first == again
    assert 0 < sum(first["fault_hits"]) < 30  # fired on some, not all
    for key in ("cluster_id", "topic_ids", "classic", "kip848", "fault_hits"):
        assert first[key] != other[key], key


def test_a_broker_given_no_seed_draws_one_and_records_it() -> None:
    one, two = MockBroker(port=0), MockBroker(port=0)
    assert isinstance(one.seed, int) and one.seed == one.cluster.seed
    assert one.seed != two.seed or one.cluster.cluster_id != two.cluster.cluster_id
    replay = MockBroker(port=0, seed=one.seed)
    assert replay.cluster.cluster_id == one.cluster.cluster_id


def test_seeded_ids_are_version_4_and_never_start_with_a_dash() -> None:
    import random

    rng = random.Random(7)
    ids = [random_uuid(rng) for _ in range(200)]
    assert all(u.version == 4 and u != uuid.UUID(int=0) for u in ids)
    assert not any(random_base64_id(rng).startswith("-") for _ in range(2000))


def test_topic_ids_and_placement_follow_the_cluster_seed() -> None:
    def made(seed: int) -> tuple[list[uuid.UUID], list[list[int]]]:
        cluster = Cluster(node_ids=[1, 2, 3], seed=seed)
        topics = [cluster.create_topic(f"t{i}", 3, 2) for i in range(4)]
        return [t.topic_id for t in topics if t], [p.replicas for t in topics if t for p in t.partitions]
    assert made(5) == made(5)
    assert made(5)[0] != made(6)[0]


@pytest.mark.parametrize("bad", ["12", 1.5, True])
def test_a_seed_must_be_a_whole_number(bad: Any) -> None:
    with pytest.raises(ValueError, match="seed must be a whole number"):
        make_settings(seed=bad)


def test_a_fault_probability_must_be_in_range() -> None:
    broker = MockBroker(port=0)
    for bad in (0, -0.1, 1.5):
        with pytest.raises(ValueError, match="probability"):
            broker.inject(PRODUCE, error=E.NOT_LEADER_OR_FOLLOWER, probability=bad)


def test_the_pytest_option_seeds_the_fixtures_and_failures_name_the_seed(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        def test_passes(mockbroker, mockbroker_factory):
            assert mockbroker.seed == 4242
            assert mockbroker_factory().seed == 4243

        def test_fails(mockbroker):
            assert mockbroker.seed == 0
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "--mockbroker-seed=4242")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["mockbroker seed: 4242 (replay with --mockbroker-seed=4242)",
                                 "*- mockbroker -*", "broker seed(s): [4242] (replay with --mockbroker-seed=4242)"])


def test_without_the_option_the_header_names_the_seed_drawn(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_one(mockbroker):\n    print('SEED', mockbroker.seed)\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "-s")
    result.assert_outcomes(passed=1)
    header = [line for line in result.stdout.lines if line.startswith("mockbroker seed: ")]
    printed = [line for line in result.stdout.lines if "SEED " in line]
    assert header and printed and header[0].split()[2] == printed[0].split("SEED ")[1].split()[0]


def test_a_fault_with_a_probability_over_http(api: Api) -> None:  # noqa: F811
    rule = api.post("/faults", {"api_key": 0, "error": 6, "count": 5, "probability": 0.25}, 201)["fault"]
    assert (rule["probability"], rule["count"]) == (0.25, 5)
    for bad in (0, 1.5):
        status, body, _ = api.request("POST", "/faults", {"api_key": 0, "error": 6, "probability": bad})
        assert status == 400 and "probability" in body["message"], body
    assert api.broker.faults.rules[0].probability == 0.25 and len(api.broker.faults.rules) == 1


def test_the_command_and_the_environment_give_the_seed() -> None:
    from mockbroker.cli import build_parser, flags_from_args
    from mockbroker.envconfig import build_settings
    from mockbroker.envparsers import ConfigError

    assert build_settings({"MOCKBROKER_SEED": "0"}).broker_settings().seed == 0
    flags = flags_from_args(build_parser().parse_args(["--seed", "31"]))
    settings = build_settings({"MOCKBROKER_SEED": "5"}, flags)  # the flag wins
    assert settings.broker_settings().seed == 31
    assert MockBroker.from_settings(settings.broker_settings()).seed == 31
    assert build_settings({}).broker_settings().seed is None
    with pytest.raises(ConfigError, match="MOCKBROKER_SEED"):
        build_settings({"MOCKBROKER_SEED": "many"})


def test_xdist_workers_take_the_seed_of_the_header(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("xdist")
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parent.parent))  # this checkout's plugin
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.parametrize("n", range(4))
        def test_fails(mockbroker, n):
            assert False
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", "-p", "xdist")
    result.assert_outcomes(failed=4)
    [header] = [line for line in result.stdout.lines if line.startswith("mockbroker seed: ")]
    seed = int(header.split()[2])
    assert sum(f"broker seed(s): [{seed}]" in line for line in result.stdout.lines) == 4
