"""Raw-protocol tests of FindCoordinator (10) and the classic group protocol: JoinGroup (11), Heartbeat (12),
LeaveGroup (13), SyncGroup (14), every version."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from mockbroker.clock import Clock
from mockbroker.protocol.errors import ErrorCode
from mockbroker.server import MockBroker
from mockbroker.state.cluster.cluster import Listener
from tests.rawclient import RawClient

FIND_COORDINATOR, JOIN, HEARTBEAT, LEAVE, SYNC = 10, 11, 12, 13, 14
E = ErrorCode
FAST = pytest.mark.mockbroker(config={"group.initial.rebalance.delay.ms": 0})


@pytest.fixture
def client(mockbroker: MockBroker) -> Iterator[RawClient]:
    with RawClient(mockbroker.host, mockbroker.port) as c:
        yield c


def join_body(group: str, member_id: str = "", *, session: int = 10000, rebalance: int = 30000,
              instance: str | None = None, protocols: list[tuple[str, bytes]] | None = None,
              protocol_type: str = "consumer") -> dict[str, Any]:
    return {"group_id": group, "session_timeout_ms": session, "rebalance_timeout_ms": rebalance, "member_id": member_id,
            "group_instance_id": instance, "protocol_type": protocol_type,
            "protocols": [{"name": n, "metadata": m} for n, m in (protocols or [("range", b"meta")])]}


def join(c: RawClient, version: int, group: str, member_id: str = "", **kwargs: Any) -> Any:
    return c.request(JOIN, version, join_body(group, member_id, **kwargs))


def join_member(c: RawClient, version: int, group: str, **kwargs: Any) -> Any:
    """A full join: with MEMBER_ID_REQUIRED first from v4."""
    r = join(c, version, group, **kwargs)
    if version >= 4 and kwargs.get("instance") is None:
        assert r.error_code == E.MEMBER_ID_REQUIRED
        r = join(c, version, group, r.member_id, **kwargs)
    return r


def sync(c: RawClient, version: int, group: str, member_id: str, generation: int,
         assignments: dict[str, bytes] | None = None, **extra: Any) -> Any:
    body = {"group_id": group, "generation_id": generation, "member_id": member_id,
            "protocol_type": "consumer", "protocol_name": "range",
            "assignments": [{"member_id": m, "assignment": a} for m, a in (assignments or {}).items()], **extra}
    return c.request(SYNC, version, body)


def heartbeat(c: RawClient, version: int, group: str, member_id: str, generation: int,
              instance: str | None = None) -> int:
    return int(c.request(HEARTBEAT, version, {"group_id": group, "generation_id": generation, "member_id": member_id,
                                              "group_instance_id": instance}).error_code)


def wait_for_state(broker: MockBroker, group: str, state: str, timeout: float = 10.0) -> None:
    """A request sent without waiting for its answer has reached the broker once the group shows it."""
    deadline = time.monotonic() + timeout
    while True:
        groups = {g.group_id: g.state for g in broker.groups()}
        if groups.get(group) == state:
            return
        assert time.monotonic() < deadline, f"group {group} never reached {state}: {groups}"
        time.sleep(0.01)


# -- FindCoordinator -----------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_find_coordinator_answers_this_node(client: RawClient, mockbroker: MockBroker, version: int) -> None:
    r = client.request(FIND_COORDINATOR, version, {"key": "g", "key_type": 0})
    assert (r.error_code, r.node_id, r.host, r.port) == (0, 1, mockbroker.host, mockbroker.port)
    if version >= 1:
        assert r.error_message == "NONE"


@pytest.mark.parametrize("version", [4, 5, 6])
def test_find_coordinator_batches_keys_of_groups_and_transactions(client: RawClient, mockbroker: MockBroker,
                                                                  version: int) -> None:
    for key_type in (0, 1):
        r = client.request(FIND_COORDINATOR, version, {"key_type": key_type, "coordinator_keys": ["a", "b"]})
        assert [(c.key, c.node_id, c.host, c.port, c.error_code) for c in r.coordinators] == [
            ("a", 1, mockbroker.host, mockbroker.port, 0), ("b", 1, mockbroker.host, mockbroker.port, 0)]


@pytest.mark.parametrize("version,key_type", [(1, 2), (3, 7), (4, 7), (6, 2)])
def test_find_coordinator_unknown_key_type_is_invalid_request(client: RawClient, version: int, key_type: int) -> None:
    if version < 4:
        r = client.request(FIND_COORDINATOR, version, {"key": "g", "key_type": key_type})
        assert (r.error_code, r.node_id, r.host, r.port) == (E.INVALID_REQUEST, -1, "", -1)
    else:
        r = client.request(FIND_COORDINATOR, version, {"key_type": key_type, "coordinator_keys": ["g"]})
        assert [(c.error_code, c.node_id) for c in r.coordinators] == [(E.INVALID_REQUEST, -1)]


def test_find_coordinator_answers_with_the_clients_listener_address(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = mockbroker_factory(listeners=[
        Listener("INTERNAL", 1, "127.0.0.1", 0, advertised_host="broker.internal", advertised_port=19092),
        Listener("EXTERNAL", 1, "127.0.0.1", 0, advertised_host="localhost", advertised_port=29092),
    ])
    for listener, expected in zip(broker.cluster.listeners, [("broker.internal", 19092), ("localhost", 29092)],
                                  strict=True):
        with RawClient("127.0.0.1", listener.port) as c:
            r = c.request(FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": ["g"]})
            assert [(x.host, x.port) for x in r.coordinators] == [expected]


# -- JoinGroup / SyncGroup -------------------------------------------------------------------------------


@FAST
@pytest.mark.parametrize("version", range(10))
def test_one_member_joins_syncs_and_heartbeats_at_every_version(client: RawClient, mockbroker: MockBroker,
                                                                version: int) -> None:
    r = join(client, version, "g")
    if version >= 4:
        assert (r.error_code, r.generation_id) == (E.MEMBER_ID_REQUIRED, -1)
        assert r.member_id.startswith("raw-test-")
        r = join(client, version, "g", r.member_id)
    assert (r.error_code, r.generation_id, r.protocol_name, r.leader) == (0, 1, "range", r.member_id)
    assert [(m.member_id, m.metadata) for m in r.members] == [(r.member_id, b"meta")]
    if version >= 7:
        assert r.protocol_type == "consumer"
    sync_version = min(version, 5)
    s = sync(client, sync_version, "g", r.member_id, 1, {r.member_id: b"mine"})
    assert (s.error_code, s.assignment) == (0, b"mine")
    if sync_version >= 5:
        assert (s.protocol_type, s.protocol_name) == ("consumer", "range")
    assert heartbeat(client, min(version, 4), "g", r.member_id, 1) == 0
    [g] = mockbroker.groups()
    assert (g.state, g.generation_or_epoch, g.protocol) == ("Stable", 1, "range")


@FAST
def test_v0_join_uses_the_session_timeout_as_rebalance_timeout(client: RawClient, mockbroker: MockBroker) -> None:
    r = client.request(JOIN, 0, join_body("g", session=7000, rebalance=999999))
    assert r.error_code == 0
    member = mockbroker.group_coordinator.classic_group("g").members[r.member_id]  # type: ignore[union-attr]
    assert member.rebalance_timeout_ms == 7000


@FAST
def test_join_before_v7_sends_an_empty_protocol_name_on_errors(client: RawClient) -> None:
    r = join(client, 6, "g", "unknown-member")
    assert (r.error_code, r.protocol_name, r.generation_id) == (E.UNKNOWN_MEMBER_ID, "", -1)
    r = join(client, 7, "g", "unknown-member")
    assert (r.error_code, r.protocol_name, r.protocol_type) == (E.UNKNOWN_MEMBER_ID, "", None)


@FAST
@pytest.mark.parametrize("session", [5999, 1800001])
def test_session_timeout_out_of_bounds_is_invalid(client: RawClient, session: int) -> None:
    assert join(client, 5, "g", session=session).error_code == E.INVALID_SESSION_TIMEOUT


@FAST
def test_empty_group_id_is_invalid_for_every_classic_api(client: RawClient) -> None:
    assert join(client, 5, "").error_code == E.INVALID_GROUP_ID
    assert sync(client, 5, "", "m", 1).error_code == E.INVALID_GROUP_ID
    assert heartbeat(client, 4, "", "m", 1) == E.INVALID_GROUP_ID
    assert client.request(LEAVE, 4, {"group_id": "", "members": [{"member_id": "m"}]}).error_code == E.INVALID_GROUP_ID


@FAST
def test_second_member_rebalances_the_group_and_both_get_the_new_generation(mockbroker: MockBroker) -> None:
    with RawClient(mockbroker.host, mockbroker.port) as c1, RawClient(mockbroker.host, mockbroker.port) as c2:
        a = join_member(c1, 5, "g")
        assert sync(c1, 5, "g", a.member_id, 1, {a.member_id: b"all"}).error_code == 0
        first = join(c2, 5, "g")
        c2.send(JOIN, 5, join_body("g", first.member_id))  # parked until a rejoins
        wait_for_state(mockbroker, "g", "PreparingRebalance")
        assert heartbeat(c1, 4, "g", a.member_id, 1) == E.REBALANCE_IN_PROGRESS
        ra = join(c1, 5, "g", a.member_id)
        _, rb = c2.recv(JOIN, 5)
        assert ra.generation_id == rb.generation_id == 2
        assert ra.leader == a.member_id and len(ra.members) == 2 and rb.members == []
        c2.send(SYNC, 5, {"group_id": "g", "generation_id": 2, "member_id": rb.member_id, "protocol_type": "consumer",
                          "protocol_name": "range", "assignments": []})  # parked until the leader's assignment
        la = sync(c1, 5, "g", a.member_id, 2, {a.member_id: b"A", rb.member_id: b"B"})
        _, lb = c2.recv(SYNC, 5)
        assert (la.assignment, lb.assignment) == (b"A", b"B")


@FAST
def test_sync_errors(client: RawClient) -> None:
    a = join_member(client, 5, "g")
    assert sync(client, 5, "g", a.member_id, 2).error_code == E.ILLEGAL_GENERATION
    assert sync(client, 5, "g", "stranger", 1).error_code == E.UNKNOWN_MEMBER_ID
    assert sync(client, 5, "nope", a.member_id, 1).error_code == E.UNKNOWN_MEMBER_ID
    assert sync(client, 5, "g", a.member_id, 1, protocol_name="roundrobin").error_code == E.INCONSISTENT_GROUP_PROTOCOL
    assert sync(client, 5, "g", a.member_id, 1, protocol_type=None).error_code == E.INCONSISTENT_GROUP_PROTOCOL
    assert sync(client, 4, "g", a.member_id, 1, {a.member_id: b"x"}).error_code == 0


@FAST
def test_member_with_another_protocol_is_inconsistent(client: RawClient) -> None:
    join_member(client, 5, "g")
    assert join(client, 5, "g", protocols=[("roundrobin", b"")]).error_code == E.INCONSISTENT_GROUP_PROTOCOL
    assert join(client, 5, "g", protocol_type="connect").error_code == E.INCONSISTENT_GROUP_PROTOCOL


@FAST
def test_heartbeat_errors(client: RawClient) -> None:
    a = join_member(client, 5, "g")
    sync(client, 5, "g", a.member_id, 1, {})
    assert heartbeat(client, 4, "g", a.member_id, 2) == E.ILLEGAL_GENERATION
    assert heartbeat(client, 4, "g", "stranger", 1) == E.UNKNOWN_MEMBER_ID
    assert heartbeat(client, 0, "nope", a.member_id, 1) == E.UNKNOWN_MEMBER_ID


# -- LeaveGroup ------------------------------------------------------------------------------------------


@FAST
@pytest.mark.parametrize("version", [0, 1, 2])
def test_leave_one_member_before_v3(client: RawClient, mockbroker: MockBroker, version: int) -> None:
    a = join_member(client, 5, "g")
    assert client.request(LEAVE, version, {"group_id": "g", "member_id": "stranger"}).error_code == E.UNKNOWN_MEMBER_ID
    assert client.request(LEAVE, version, {"group_id": "g", "member_id": a.member_id}).error_code == 0
    assert mockbroker.groups()[0].state == "Empty"
    assert client.request(LEAVE, version, {"group_id": "nope", "member_id": "x"}).error_code == E.UNKNOWN_MEMBER_ID


@FAST
@pytest.mark.parametrize("version", [3, 4, 5])
def test_leave_a_batch_of_members_from_v3(mockbroker: MockBroker, version: int) -> None:
    with RawClient(mockbroker.host, mockbroker.port) as c1, RawClient(mockbroker.host, mockbroker.port) as c2:
        a = join_member(c1, 5, "g", instance="i-a")
        b_id = join(c2, 5, "g").member_id
        c2.send(JOIN, 5, join_body("g", b_id))
        join(c1, 5, "g", a.member_id, instance="i-a")
        c2.recv(JOIN, 5)
        members = [{"member_id": b_id, "reason": "bye"}, {"member_id": "", "group_instance_id": "i-a"},
                   {"member_id": "stranger"}]
        r = c1.request(LEAVE, version, {"group_id": "g", "members": members})
        assert r.error_code == 0
        assert [(m.member_id, m.group_instance_id, m.error_code) for m in r.members] == [
            (b_id, None, 0), ("", "i-a", 0), ("stranger", None, E.UNKNOWN_MEMBER_ID)]
        assert mockbroker.groups()[0].state == "Empty"
        r = c1.request(LEAVE, version, {"group_id": "nope", "members": [{"member_id": "x"}]})
        assert [(m.member_id, m.error_code) for m in r.members] == [("x", E.UNKNOWN_MEMBER_ID)]


# -- static membership -----------------------------------------------------------------------------------


@FAST
def test_static_member_restart_keeps_generation_and_assignment(mockbroker: MockBroker) -> None:
    with RawClient(mockbroker.host, mockbroker.port) as c:
        a = join(c, 9, "g", instance="i-a")
        assert a.error_code == 0 and a.member_id.startswith("i-a-")
        sync(c, 5, "g", a.member_id, 1, {a.member_id: b"A"}, group_instance_id="i-a")
    with RawClient(mockbroker.host, mockbroker.port) as c:
        again = join(c, 9, "g", instance="i-a")
        assert (again.error_code, again.generation_id, again.skip_assignment) == (0, 1, True)
        assert again.member_id != a.member_id
        assert sync(c, 5, "g", again.member_id, 1, group_instance_id="i-a").assignment == b"A"
        assert heartbeat(c, 4, "g", a.member_id, 1, "i-a") == E.FENCED_INSTANCE_ID
        assert mockbroker.groups()[0].state == "Stable"


# -- sessions on the broker clock ------------------------------------------------------------------------


def test_member_without_heartbeats_is_removed_when_the_broker_clock_passes_its_session(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    # A non-zero initial rebalance delay keeps the group in PreparingRebalance until the frozen clock is
    # advanced (with 0 ms it could complete before the test looks: a stable state to wait for).
    broker = mockbroker_factory(clock=Clock(frozen=True), config={"group.initial.rebalance.delay.ms": 100})
    with RawClient(broker.host, broker.port) as c:
        first = join(c, 5, "g", session=6000)
        c.send(JOIN, 5, join_body("g", first.member_id, session=6000))
        wait_for_state(broker, "g", "PreparingRebalance")
        broker.clock.advance(0.1)  # the initial rebalance delay is due on the frozen clock
        _, r = c.recv(JOIN, 5)
        sync(c, 5, "g", r.member_id, 1, {})
        broker.clock.advance(5.9)
        assert heartbeat(c, 4, "g", r.member_id, 1) == 0
        broker.clock.advance(5.9)
        assert heartbeat(c, 4, "g", r.member_id, 1) == 0
        broker.clock.advance(6)
        assert heartbeat(c, 4, "g", r.member_id, 1) == E.UNKNOWN_MEMBER_ID
        assert broker.groups()[0].state == "Empty"


def test_initial_rebalance_waits_for_the_delay_on_the_broker_clock(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    # Kafka's default, 3000 ms (the test defaults start from 0)
    broker = mockbroker_factory(clock=Clock(frozen=True), config={"group.initial.rebalance.delay.ms": 3000})
    with RawClient(broker.host, broker.port) as c:
        first = join(c, 5, "g")
        c.send(JOIN, 5, join_body("g", first.member_id))
        wait_for_state(broker, "g", "PreparingRebalance")
        broker.clock.advance(2.999)
        assert broker.groups()[0].state == "PreparingRebalance"
        broker.clock.advance(0.001)
        _, r = c.recv(JOIN, 5)
        assert (r.error_code, r.generation_id) == (0, 1)
