"""Isolation on a shared cluster (mockbroker/remote/naming.py, teardown.py): a RemoteBroker with a prefix names
the test's topics, groups and transactional ids under it on the cluster, maps every call's names both ways,
lists only the test's own, and deletes them at cleanup; the cluster is a MockBroker(brokers=3) reached
over the wire, shared by two "tests" (two prefixes) and a topic of nobody's."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import confluent_kafka as ck
import pytest

from mockbroker import MockBroker
from mockbroker.remote import RemoteBroker
from mockbroker.remote.naming import Isolation, new_run_id, prefix_for
from tests.remote.test_remote_target import QUIET, consume_and_commit, produce

pytest_plugins = ["pytester"]


@pytest.fixture(scope="module")
def cluster() -> Iterator[MockBroker]:
    with MockBroker(brokers=3).run_in_thread() as broker:
        yield broker


@pytest.fixture
def run_id() -> str:
    return new_run_id()


def isolated(cluster: MockBroker, prefix: str) -> RemoteBroker:
    return RemoteBroker(cluster.bootstrap_servers, prefix=prefix)


def test_prefixes_are_legal_bounded_and_never_the_start_of_another(run_id: str) -> None:
    ids = ["tests/a.py::test_x", "tests/a.py::test_x_y", "tests/a.py::test_x[1]", "tests/b.py::test_x",
           "tests/a.py::" + "test_" + "long" * 100, "tests/a.py::test_ünïcode and spaces/slashes"]
    prefixes = [prefix_for(run_id, i) for i in ids]
    assert len(set(prefixes)) == len(ids)
    for p in prefixes:
        assert p.startswith(f"mb-{run_id}-") and p.endswith("-")
        assert all(c.isascii() and (c.isalnum() or c in "._-") for c in p)
        assert len(p) <= 3 + 6 + 1 + 6 + 1 + 40 + 1  # a topic name may have 249 characters
        assert all(not q.startswith(p) for q in prefixes if q != p)
    assert prefix_for(run_id, ids[0]) == prefixes[0]  # the same test, the same prefix within a run
    assert prefixes[0] == f"mb-{run_id}-{prefixes[0].split('-')[2]}-test_x-"


def test_names_map_both_ways_and_a_real_name_passes_through() -> None:
    names = Isolation("mb-abc123-def456-t-")
    assert names.real("orders") == "mb-abc123-def456-t-orders"
    assert names.real(names.real("orders")) == names.real("orders")
    assert names.test_name(names.real("orders")) == "orders"
    assert names.test_name("__consumer_offsets") == "__consumer_offsets" and not names.own("__consumer_offsets")
    plain = Isolation("")
    assert (plain.real("orders"), plain.test_name("orders"), plain.own("orders")) == ("orders", "orders", True)


def test_each_call_maps_names_and_lists_only_the_tests_own(cluster: MockBroker, run_id: str) -> None:
    mine, theirs = prefix_for(run_id, "t.py::test_mine"), prefix_for(run_id, "t.py::test_theirs")
    nobodys = f"nobodys-{uuid.uuid4().hex[:6]}"
    cluster.create_topic(nobodys)
    with isolated(cluster, mine) as remote, isolated(cluster, theirs) as neighbour:
        made = remote.create_topic("orders", 2)
        assert (made.name, made.real_name, made.partitions) == ("orders", mine + "orders", 2)
        neighbour.create_topic("orders", 1)  # the same name in another test: no TOPIC_ALREADY_EXISTS
        assert remote.topic("orders") == mine + "orders" and remote.group("g") == mine + "g"
        assert remote.transactional_id("t") == mine + "t"
        assert {mine + "orders", theirs + "orders", nobodys} <= set(cluster.topics())
        assert remote.topics() == ["orders"] and neighbour.topics() == ["orders"]

        produce(remote.bootstrap_servers, remote.topic("orders"), 6, spread=2)
        produce(neighbour.bootstrap_servers, neighbour.topic("orders"), 1)
        remote.wait_for_records("orders", 6, timeout=30)
        assert [r.topic for r in remote.records("orders")] == ["orders"] * 6
        assert remote.records(remote.topic("orders")) == remote.records("orders")  # a real name passes through
        assert [r.value for r in remote.records("orders")] == [r.value for r in cluster.records(mine + "orders")]
        assert len(neighbour.records("orders")) == 1
        assert remote.batches("orders", 1) == cluster.batches(mine + "orders", 1)
        assert remote.offsets("orders", 1) == cluster.offsets(mine + "orders", 1)
        assert remote.producers("orders", 0)[0]["producer_id"] >= 0

        consumer = consume_and_commit(remote.bootstrap_servers, remote.topic("orders"), remote.group("g"), 6)
        other = consume_and_commit(neighbour.bootstrap_servers, neighbour.topic("orders"), neighbour.group("g"), 1)
        try:
            remote.wait_for_group("g", "Stable", members=1, timeout=30)
            assert remote.committed("g") == {("orders", 0): 3, ("orders", 1): 3}
            assert neighbour.committed("g") == {("orders", 0): 1}
            [group] = remote.groups()  # the neighbour's group and nobody's are not listed
            assert group.group_id == "g" and group.members[0].assignment == {"orders": [0, 1]}
            remote.wait_for_committed("g", topic="orders", timeout=30)
        finally:
            consumer.close()
            other.close()

        producer = ck.Producer({"bootstrap.servers": remote.bootstrap_servers,
                                "transactional.id": remote.transactional_id("t"), **QUIET})
        producer.init_transactions(30)
        producer.begin_transaction()
        producer.produce(remote.topic("orders"), value=b"in a transaction", partition=0)
        assert producer.flush(30) == 0
        remote.wait_for_transaction("t", "Ongoing", timeout=30)
        [txn] = remote.transactions()
        assert (txn.transactional_id, txn.partitions) == ("t", [("orders", 0)])
        assert neighbour.transactions() == []
        producer.commit_transaction(30)
        del producer
        remote.wait_for_transaction("t", "CompleteCommit", timeout=30)
        assert [t.transactional_id for t in cluster.transactions()].count(mine + "t") == 1

        assert remote.cleanup() == []
        assert remote.topics() == [] and remote.groups() == []
        assert neighbour.topics() == ["orders"] and [g.group_id for g in neighbour.groups()] == ["g"]
        assert nobodys in cluster.topics()  # nobody's topic is nobody's to delete
        assert neighbour.cleanup() == []
    assert not [t for t in cluster.topics() if t.startswith((mine, theirs))]
    assert not [g.group_id for g in cluster.groups() if g.group_id.startswith((mine, theirs))]


def test_cleanup_reports_a_group_it_could_not_delete_and_deletes_the_rest(cluster: MockBroker, run_id: str) -> None:
    prefix = prefix_for(run_id, "t.py::test_left_open")
    with isolated(cluster, prefix) as remote:
        remote.create_topic("in")
        produce(remote.bootstrap_servers, remote.topic("in"), 2)
        consumer = consume_and_commit(remote.bootstrap_servers, remote.topic("in"), remote.group("still-in"), 2)
        try:
            remote.wait_for_group("still-in", "Stable", members=1, timeout=30)
            problems = remote.cleanup()
            assert problems == [f"group {prefix + 'still-in'!r} not deleted: NON_EMPTY_GROUP"]
            assert remote.topics() == []  # the topic went all the same
        finally:
            consumer.close()
        remote.wait_for_group("still-in", "Empty", timeout=30)
        assert remote.cleanup() == [] and remote.groups() == []


def test_without_a_prefix_cleanup_deletes_nothing(cluster: MockBroker) -> None:
    name = f"kept-{uuid.uuid4().hex[:6]}"
    with RemoteBroker(cluster.bootstrap_servers) as remote:
        remote.create_topic(name)
        assert remote.topic(name) == name and remote.prefix == ""
        assert "__consumer_offsets" in remote.topics() or name in remote.topics()
        assert remote.cleanup() == []
    assert name in cluster.topics()


def test_the_embedded_broker_maps_every_name_to_itself(mockbroker: MockBroker) -> None:
    assert isinstance(mockbroker, MockBroker)
    assert (mockbroker.topic("orders"), mockbroker.group("g"), mockbroker.transactional_id("t")) == ("orders", "g", "t")


ISOLATED_SUITE = '''
import confluent_kafka
import pytest

LEFT_OPEN = []


@pytest.mark.parametrize("round", [1, 2])
def test_the_same_name_in_two_tests(mockbroker, round):
    mockbroker.create_topic("orders", 2)  # no TOPIC_ALREADY_EXISTS: each test has its own "orders"
    assert mockbroker.topics() == ["orders"]
    assert mockbroker.topic("orders").startswith("mb-") and mockbroker.topic("orders").endswith("-orders")


@pytest.mark.mockbroker(isolate=False)
def test_not_isolated(mockbroker):
    assert mockbroker.topic("kept-as-named") == "kept-as-named"
    mockbroker.create_topic("kept-as-named")


def test_a_group_left_open_is_reported(mockbroker):
    mockbroker.create_topic("in")
    consumer = confluent_kafka.Consumer({"bootstrap.servers": mockbroker.bootstrap_servers, "log_level": 3,
                                         "group.id": mockbroker.group("open"), "auto.offset.reset": "earliest"})
    consumer.subscribe([mockbroker.topic("in")])
    LEFT_OPEN.append(consumer)  # still a member at teardown
    mockbroker.wait_for_group("open", "Stable", members=1, timeout=30)
'''


def test_the_fixture_isolates_each_test_and_reports_what_it_left(pytester: pytest.Pytester, cluster: MockBroker,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parents[2]) + os.pathsep
                       + os.environ.get("PYTHONPATH", ""))
    pytester.makepyfile(ISOLATED_SUITE)
    before = set(cluster.topics())
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--kafka-bootstrap", cluster.bootstrap_servers)
    result.assert_outcomes(passed=4, warnings=1)
    result.stdout.fnmatch_lines(["*IsolationCleanupWarning: *test_a_group_left_open_is_reported: left on the "
                                 "cluster at *: group 'mb-*-test_a_group_left_open_is_reported-open' not "
                                 "deleted: NON_EMPTY_GROUP"])
    assert set(cluster.topics()) - before == {"kept-as-named"}  # every isolated topic deleted
    cluster.delete_topic("kept-as-named")


def test_the_isolate_option_is_accepted_and_ignored_embedded(pytester: pytest.Pytester,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MOCKBROKER_KAFKA_BOOTSTRAP", raising=False)
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parents[2]) + os.pathsep
                       + os.environ.get("PYTHONPATH", ""))
    pytester.makepyfile('''
import pytest
from mockbroker import MockBroker

@pytest.mark.mockbroker(isolate=False, partitions=2)
def test_embedded(mockbroker):
    assert isinstance(mockbroker, MockBroker) and mockbroker.topic("orders") == "orders"
''')
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
