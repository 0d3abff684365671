"""The authorization sweep (issue #33 item 1): on a SASL broker with ACLs, a principal with no ACLs
(User:mallory) sends every API that takes a list of resources, every named resource refused (existing
ones and absent ones), and each answer must name only what was asked (never more: authorization filters,
it never widens a request) with Kafka's authorization code (KafkaApis / ControllerApis / AclApis), and
nothing of the broker's state may change (topics, records, offsets, groups, transactions, ACLs, configs,
users). The "empty list means all" forms (Metadata topics=null and v0's [], DescribeTopicPartitions [],
ListGroups, ListTransactions, DescribeLogDirs / ListPartitionReassignments / DescribeUserScramCredentials
null, ElectLeaders null) must answer nothing the principal may not see.

The cases live in tests/handlers/authorization_sweep_cases.py, one or more per API with the request's list
field named; `test_the_sweep_covers_every_api_with_a_list_in_its_request` reads the registry, so an API
added later with an array in its request schema fails here until it has a case.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from mockbroker.dispatch import REGISTRY, load_handlers
from mockbroker.protocol._generated.specs import MESSAGES
from mockbroker.protocol.errors import ErrorCode
from mockbroker.server import MockBroker
from tests.handlers.authorization_sweep_cases import (
    ADMIN,
    CASES,
    EVERYTHING,
    MALLORY,
    NO_RESOURCE_LIST,
    Case,
    Setup,
    login,
    make_state,
)

pytestmark = [pytest.mark.adversarial, pytest.mark.mockbroker(security="SASL_PLAINTEXT", acls=True,
                                    users={ADMIN[0]: ADMIN[1], MALLORY[0]: MALLORY[1]})]


def request_arrays(api_key: int, lo: int, hi: int) -> set[str]:
    """The top-level array fields of an API's request schema over versions lo..hi."""
    names: set[str] = set()
    for seg_lo, seg_hi, _flex, fields in MESSAGES[api_key][1]:
        if seg_hi < lo or seg_lo > hi:
            continue
        for name, ftype, (f_lo, f_hi), *_ in fields:
            if ftype.startswith("[]") and f_lo <= hi and f_hi >= lo:
                names.add(name)
    return names


def test_the_sweep_covers_every_api_with_a_list_in_its_request() -> None:
    load_handlers()
    with_lists = {k: request_arrays(k, s.min_version, s.max_version) for k, s in REGISTRY.items()}
    swept: dict[int, set[str]] = {}
    for case in CASES:
        assert case.field in request_arrays(case.api_key, case.version, case.version), case.id
        swept.setdefault(case.api_key, set()).add(case.field)
    missing = {k: v for k, v in with_lists.items() if v and k not in swept}
    assert not missing, f"APIs with a list in their request and no sweep case: {missing}"
    assert not set(swept) & set(NO_RESOURCE_LIST)
    assert all(not with_lists[k] for k in NO_RESOURCE_LIST)


@pytest.fixture
def setup(mockbroker: MockBroker) -> Setup:
    return make_state(mockbroker)


def snapshot(broker: MockBroker) -> dict[str, Any]:
    """Everything a refused request could have changed, read through the broker's own inspection."""
    def state() -> dict[str, Any]:
        cluster = broker.cluster
        credentials = broker.security.credentials
        return {
            "topics": {name: (t.topic_id, len(t.partitions), dict(t.config.values)) for name, t in
                       cluster.topics.items()},
            "broker_config": (dict(cluster.config.dynamic_broker), dict(cluster.config.dynamic_default)),
            "users": ({u: {m: repr(c) for m, c in by.items()} for u, by in credentials.scram.items()},
                      dict(credentials.plain)),
        }

    out = broker._call(state)
    out["logs"] = {(name, p): (broker.offsets(name, p), len(broker.records(name, p)))
                   for name, (_id, count, _cfg) in out["topics"].items() for p in range(count)}
    out["groups"] = sorted(repr(g) for g in broker.groups())
    out["committed"] = {g: broker.committed(g) for g in ("billing", "ghost", "live")}
    out["transactions"] = sorted(repr(t) for t in broker.transactions())
    out["share_groups"] = broker.share_groups()
    out["acls"] = [repr(a) for a in broker.acls()]
    out["quotas"] = broker.quotas()
    return out


@pytest.fixture
def mallory(mockbroker: MockBroker, setup: Setup) -> Iterator[Any]:
    with login(mockbroker, *MALLORY) as c:
        yield c


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_fully_refused_request_answers_only_what_it_named_and_changes_nothing(
        mockbroker: MockBroker, setup: Setup, mallory: Any, case: Case) -> None:
    before = snapshot(mockbroker)
    resp = mallory.request(case.api_key, case.version, case.body(setup))
    if case.top is not None:
        assert resp.error_code == case.top, f"{case.id}: top-level {ErrorCode(resp.error_code)!r}"
    answered = sorted(case.answers(resp), key=repr)
    expected = sorted(case.expected(setup), key=repr)
    assert answered == expected, f"{case.id}: answered {answered}, expected {expected}"
    assert snapshot(mockbroker) == before, f"{case.id} changed the broker's state"


def test_the_admin_sees_what_mallory_was_refused(mockbroker: MockBroker, setup: Setup) -> None:
    """The sweep's refusals are the ACLs' doing: the same broker shows the admin every resource."""
    with login(mockbroker, *ADMIN) as c:
        topics = c.request(3, 12, {"topics": None}).topics
        assert {t.name for t in topics} >= set(EVERYTHING["topics"])
        assert {g.group_id for g in c.request(16, 5, {}).groups} >= set(EVERYTHING["groups"])
        listed = c.request(66, 1, {"state_filters": [], "producer_id_filters": []}).transaction_states
        assert {t.transactional_id for t in listed} >= set(EVERYTHING["transactional_ids"])
