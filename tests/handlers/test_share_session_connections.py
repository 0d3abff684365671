"""A share session belongs to the connection that opened it (KIP-932; Kafka's ShareSessionCache records the
connection in maybeCreateSession and its disconnect listener ends that connection's session): when the connection
closes, the session ends and the member's acquired records come back AVAILABLE at once, delivery counts kept
(archived at the delivery limit), not when their acquisition lock runs out. A session opened again on another
connection is not ended by the first one's close; a connection that never opened a session ends nothing.
The broker clock is frozen: no lock runs out in these tests, so whatever comes back came back by the close."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator

import pytest

from mockbroker.clock import Clock
from mockbroker.server import MockBroker
from tests.handlers.conftest import connect
from tests.handlers.test_share_groups import acquired, heartbeat, produce_values, share_fetch
from tests.rawclient import RawClient

NONE, SHARE_SESSION_NOT_FOUND = 0, 122
RELEASE = 2


@pytest.fixture
def broker() -> Iterator[MockBroker]:
    config = {"share.auto.offset.reset": "earliest", "group.share.delivery.count.limit": 2}
    with MockBroker(clock=Clock(frozen=True), config=config).run_in_thread() as b:
        b.create_topic("q", 1)
        yield b


def _topic_id(broker: MockBroker) -> uuid.UUID:
    return broker._call(lambda: broker.cluster.topic("q").topic_id)


def _records(broker: MockBroker) -> list[tuple[int, str, int, str | None]]:
    """(offset, state, delivery count, holder) of every in-flight record of the share partition q-0."""
    sp = broker.share_groups()["sg"]["partitions"]["q-0"]
    return [(r["offset"], r["state"], r["delivery_count"], r["member_id"]) for r in sp["records"]]  # type: ignore[index]


def _start_offset(broker: MockBroker) -> int:
    return int(broker.share_groups()["sg"]["partitions"]["q-0"]["start_offset"])  # type: ignore[index]


def _connections(broker: MockBroker) -> int:
    return broker._call(lambda: len(broker._connections))


def _wait_for(condition: Callable[[], bool], what: str) -> None:
    """Wait (generously) for the broker to have handled a close: its connection_lost runs on the broker's loop."""
    deadline = time.monotonic() + 20
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def _close(broker: MockBroker, client: RawClient) -> None:
    """Close client's connection and wait until the broker has seen it go (MockBroker.connection_closed ran)."""
    before = _connections(broker)
    client.close()
    _wait_for(lambda: _connections(broker) < before, "the broker never saw the connection close")


def test_a_closed_connection_ends_its_share_session_and_hands_back_its_records_at_once(broker: MockBroker) -> None:
    tid = _topic_id(broker)
    first = connect(broker)
    produce_values(first, 3)
    assert heartbeat(first, "a", 0, ["q"]).error_code == NONE
    assert acquired(share_fetch(first, tid, "a", 0)) == [(0, 0, 2, 1)]
    assert _records(broker) == [(0, "ACQUIRED", 1, "a"), (1, "ACQUIRED", 1, "a"), (2, "ACQUIRED", 1, "a")]
    _close(broker, first)
    # Available again at once, on a frozen clock (no lock ran out), each with its delivery count.
    assert _records(broker) == [(0, "AVAILABLE", 1, None), (1, "AVAILABLE", 1, None), (2, "AVAILABLE", 1, None)]
    with connect(broker) as again:
        # The session went with its connection: its next epoch finds none.
        assert share_fetch(again, tid, "a", 1).error_code == SHARE_SESSION_NOT_FOUND
        # The member is still in the group (only its session ended): a new session gets the records again.
        assert acquired(share_fetch(again, tid, "a", 0)) == [(0, 0, 2, 2)]
        assert share_fetch(again, tid, "a", 1, max_records=0).error_code == NONE


def test_a_session_opened_again_on_another_connection_is_not_ended_by_the_first_ones_close(broker: MockBroker) -> None:
    tid = _topic_id(broker)
    first, second = connect(broker), connect(broker)
    produce_values(first, 2)
    assert heartbeat(first, "a", 0, ["q"]).error_code == NONE
    assert acquired(share_fetch(first, tid, "a", 0)) == [(0, 0, 1, 1)]
    # The member's client opens its session again on a new connection (epoch 0): the old one is replaced, its
    # records handed back and acquired again through the new session.
    assert acquired(share_fetch(second, tid, "a", 0)) == [(0, 0, 1, 2)]
    _close(broker, first)
    assert _records(broker) == [(0, "ACQUIRED", 2, "a"), (1, "ACQUIRED", 2, "a")]
    assert share_fetch(second, tid, "a", 1, max_records=0).error_code == NONE  # the session lives on
    _close(broker, second)  # the connection that owns the session now: it ends, and the limit (2) is reached
    assert (_start_offset(broker), _records(broker)) == (2, [])  # both archived: the share partition moved past them


def test_closing_a_connection_that_never_opened_a_session_releases_nothing(broker: MockBroker) -> None:
    tid = _topic_id(broker)
    owner, other = connect(broker), connect(broker)
    produce_values(other, 2)
    assert heartbeat(other, "a", 0, ["q"]).error_code == NONE  # the member's heartbeats are not its session
    assert acquired(share_fetch(owner, tid, "a", 0)) == [(0, 0, 1, 1)]
    _close(broker, other)
    assert _records(broker) == [(0, "ACQUIRED", 1, "a"), (1, "ACQUIRED", 1, "a")]
    assert share_fetch(owner, tid, "a", 1, max_records=0).error_code == NONE
    owner.close()


def test_a_session_closed_with_its_final_epoch_leaves_nothing_for_the_close(broker: MockBroker) -> None:
    tid = _topic_id(broker)
    client = connect(broker)
    produce_values(client, 2)
    heartbeat(client, "a", 0, ["q"])
    assert acquired(share_fetch(client, tid, "a", 0)) == [(0, 0, 1, 1)]
    assert share_fetch(client, tid, "a", -1).error_code == NONE  # the final epoch: released there
    assert _records(broker) == [(0, "AVAILABLE", 1, None), (1, "AVAILABLE", 1, None)]
    with connect(broker) as other:  # another member takes them; the first connection's close must not touch them
        heartbeat(other, "b", 0, ["q"])
        assert acquired(share_fetch(other, tid, "b", 0)) == [(0, 0, 1, 2)]
        _close(broker, client)
        assert _records(broker) == [(0, "ACQUIRED", 2, "b"), (1, "ACQUIRED", 2, "b")]


def test_a_member_at_the_delivery_limit_gets_its_records_archived_at_the_close(broker: MockBroker) -> None:
    tid = _topic_id(broker)
    client = connect(broker)
    produce_values(client, 3)
    heartbeat(client, "a", 0, ["q"])
    assert acquired(share_fetch(client, tid, "a", 0, max_records=2)) == [(0, 0, 1, 1)]
    # 0 released and delivered again (its second delivery: the limit), 1 still in its first delivery, 2 taken now.
    r = share_fetch(client, tid, "a", 1, acks={0: [(0, 0, [RELEASE])]}, max_records=2)
    assert acquired(r) == [(0, 0, 0, 2), (0, 2, 2, 1)]
    _close(broker, client)
    # 0 archived (the share partition's start moves past it), 1 and 2 available again with their delivery count.
    assert (_start_offset(broker), _records(broker)) == (1, [(1, "AVAILABLE", 1, None), (2, "AVAILABLE", 1, None)])
    with connect(broker) as again:
        heartbeat(again, "b", 0, ["q"])
        assert acquired(share_fetch(again, tid, "b", 0)) == [(0, 1, 2, 2)]  # never 0 again


def test_a_connection_owns_the_last_session_it_opened(broker: MockBroker) -> None:
    # Kafka keeps one session key per connection id: a second session opened on the same connection (another
    # member) takes the connection's ownership; the first is ended only by its final epoch or its lock running out.
    tid = _topic_id(broker)
    client = connect(broker)
    produce_values(client, 2)
    heartbeat(client, "a", 0, ["q"])
    heartbeat(client, "b", 0, ["q"])
    assert acquired(share_fetch(client, tid, "a", 0, max_records=1)) == [(0, 0, 0, 1)]
    assert acquired(share_fetch(client, tid, "b", 0, max_records=1)) == [(0, 1, 1, 1)]
    _close(broker, client)
    assert _records(broker) == [(0, "ACQUIRED", 1, "a"), (1, "AVAILABLE", 1, None)]
    with connect(broker) as again:
        assert share_fetch(again, tid, "a", 1, max_records=0).error_code == NONE  # a's session is still there
        assert share_fetch(again, tid, "b", 1).error_code == SHARE_SESSION_NOT_FOUND
