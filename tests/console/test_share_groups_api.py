"""GET /share-groups and GET /share-groups/{name}: the share groups (KIP-932) over HTTP, record by record,
driven over the raw protocol so each state is exact: records acquired show their member, delivery count
and lock expiry on the broker clock; the clock running past the lock makes them available again."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from mockbroker.clock import Clock
from mockbroker.http import ControlServer
from mockbroker.server import MockBroker
from tests.docker.test_control_http import Api
from tests.handlers.conftest import make_batch, produce
from tests.handlers.test_share_groups import acquired, heartbeat, share_fetch
from tests.rawclient import RawClient


@pytest.fixture
def api() -> Iterator[Api]:
    """A broker whose share groups start at the log start, with a frozen clock (lock times are exact)."""
    with MockBroker(port=0, config={"share.auto.offset.reset": "earliest"}, clock=Clock(frozen=True)).run_in_thread() as broker:
        assert broker._loop is not None
        control = asyncio.run_coroutine_threadsafe(ControlServer(broker).start("127.0.0.1", 0),
                                                   broker._loop).result(10)
        try:
            yield Api(broker, control)
        finally:
            asyncio.run_coroutine_threadsafe(control.stop(), broker._loop).result(10)


def test_share_groups_show_members_assignments_and_in_flight_records_on_the_broker_clock(api: Api) -> None:
    broker = api.broker
    broker.create_topic("q", 2)
    topic_id = broker.node.cluster.topic("q").topic_id
    assert api.get("/share-groups") == {"share_groups": []}
    with RawClient(broker.host, broker.port) as client:
        produce(client, "q", make_batch(*[f"v{i}".encode() for i in range(5)]), partition=0)
        assert heartbeat(client, "m1", 0, ["q"]).error_code == 0
        got = share_fetch(client, topic_id, "m1", 0, partitions=(0, 1), max_records=3)
        assert acquired(got) == [(0, 0, 2, 1)]
        now = broker.clock.now_ms()
        listed = api.get("/share-groups")["share_groups"]
        assert listed == [{"group_id": "sg", "state": "Stable", "group_epoch": 1, "assignment_epoch": 1, "members": 1,
                           "share_partitions": 1, "acquired_records": 3}]
        one = api.get("/share-groups/sg")
        assert one["now_ms"] == now
        [member] = one["group"]["members"]
        assert (member["member_id"], member["member_epoch"], member["subscribed"], member["assignment"]) == (
            "m1", 1, ["q"], {"q": [0, 1]})
        [p0] = one["partitions"]
        assert (p0["topic"], p0["partition"], p0["start_offset"], p0["end_offset"], p0["high_watermark"]) == ("q", 0, 0, 3, 5)
        assert p0["counts"] == {"AVAILABLE": 0, "ACQUIRED": 3, "ACKNOWLEDGED": 0, "ARCHIVED": 0}
        assert p0["records"] == [{"offset": o, "state": "ACQUIRED", "delivery_count": 1, "member_id": "m1",
                                  "lock_expiry_ms": now + 30000, "lock_left_ms": 30000} for o in range(3)]
        # accept offset 0, then the lock of 1 and 2 runs out on the broker clock: available again
        ack = client.request(79, 1, {"group_id": "sg", "member_id": "m1", "share_session_epoch": 1, "topics": [
            {"topic_id": topic_id, "partitions": [{"partition_index": 0, "acknowledgement_batches": [
                {"first_offset": 0, "last_offset": 0, "acknowledge_types": [1]}]}]}]})
        assert [p.error_code for t in ack.responses for p in t.partitions] == [0]
        broker.clock.advance(10)
        assert [r["lock_left_ms"] for r in api.get("/share-groups/sg")["partitions"][0]["records"]] == [20000, 20000]
        broker.clock.advance(21)
        p0 = api.get("/share-groups/sg?limit=1")["partitions"][0]
        assert (p0["start_offset"], p0["end_offset"], p0["records_total"]) == (1, 3, 2)
        assert p0["records"] == [{"offset": 1, "state": "AVAILABLE", "delivery_count": 1, "member_id": None,
                                  "lock_expiry_ms": None, "lock_left_ms": None}]
        assert api.get("/share-groups")["share_groups"][0]["acquired_records"] == 0
    status, body, _ = api.request("GET", "/share-groups/nobody")
    assert (status, body["error"]) == (404, "unknown_group")
    status, body, _ = api.request("GET", "/share-groups/sg?limit=-1")
    assert (status, body["error"]) == (400, "bad_query")
