"""The per-request work bound (handlers/request_steps.py, issue #20): a Produce carrying several heavy
batches is appended in steps, and other connections are served between them. Asserted by what the other
client sees (a partly appended request), never by durations; and, driving the handler by hand, that each
step looks at the state afresh (topic deleted, leader moved, the partition appended to meanwhile)."""

from __future__ import annotations

import asyncio
import select
import threading
from typing import Any

import pytest

from mockbroker.context import RequestContext
from mockbroker.dispatch import CloseConnection
from mockbroker.handlers.k00_produce.handler import handle_produce
from mockbroker.handlers.k01_fetch import handle_fetch
from mockbroker.handlers.support.request_steps import STEP_MS
from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.headers import RequestHeader
from mockbroker.protocol.messages import Msg, decode_request, encode_request
from mockbroker.protocol.records.batch import Codec
from mockbroker.protocol.records.legacy import parse_message_set
from mockbroker.server import MockBroker
from mockbroker.state.configs import BROKER_CONFIGS
from mockbroker.state.log import validation
from tests.handlers.conftest import fetch_body, fetch_partition, fetch_topic, make_batch, produce_body
from tests.handlers.test_cluster import connect_to
from tests.handlers.test_cluster_replication import wait_for
from tests.handlers.test_produce_records import batch_of, rec
from tests.rawclient import RawClient

PRODUCE, FETCH, LIST_OFFSETS = 0, 1, 2
PARTITIONS = 9
# A step bound of 0: every partition after the first is a step of its own, so the heavy tests see the
# request interleaved with other connections however fast this machine decompresses and walks records.
HEAVY_STEPS = pytest.mark.mockbroker(config={STEP_MS: 0})


@pytest.fixture(scope="module")
def heavy_batch() -> bytes:
    """The worst one batch may be: mockbroker.max.records.per.batch (200,000) minimal records, zstd (~110 KB)."""
    limit = int(BROKER_CONFIGS[validation.MAX_RECORDS_PER_BATCH].default)
    return bytes(batch_of(b"".join(rec(i) for i in range(limit)), limit, Codec.ZSTD))


def _heavy_produce(batch: bytes, acks: int) -> dict[str, Any]:
    return {"transactional_id": None, "acks": acks, "timeout_ms": 30000, "topic_data": [
        {"name": "t", "partition_data": [{"index": i, "records": batch} for i in range(PARTITIONS)]}]}


class Watcher(threading.Thread):
    """Another client on its own connection, asking for the end offsets of the first and the last
    partition in a loop (ListOffsets latest), until told to stop; keeps every answer, in order."""

    def __init__(self, broker: MockBroker) -> None:
        super().__init__(daemon=True)
        self.client = RawClient(broker.host, broker.port, client_id="watcher", timeout=300)
        self.seen: list[tuple[int, int]] = []
        self.stop = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                resp = self.client.request(LIST_OFFSETS, 1, {"replica_id": -1, "topics": [
                    {"name": "t", "partitions": [{"partition_index": 0, "timestamp": -1},
                                                 {"partition_index": PARTITIONS - 1, "timestamp": -1}]}]})
                first, last = resp.topics[0].partitions
                self.seen.append((first.offset, last.offset))
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.error = exc
        finally:
            self.client.close()


def _watching(broker: MockBroker) -> Watcher:
    watcher = Watcher(broker)
    watcher.start()
    for _ in range(1000):  # the watcher is being served before the heavy request goes out
        if watcher.seen or watcher.error:
            break
        threading.Event().wait(0.01)
    assert watcher.seen and watcher.error is None
    return watcher


def _partly_appended(seen: list[tuple[int, int]], limit: int) -> list[tuple[int, int]]:
    """The answers given while the heavy request was half done: its first partition appended, its last not."""
    return [s for s in seen if s == (limit, 0)]


@pytest.fixture
def patient(mockbroker: MockBroker) -> Any:
    """A client that waits long for its answers: nine walks of 200,000 records on a busy machine."""
    with RawClient(mockbroker.host, mockbroker.port, timeout=300) as c:
        yield c


@HEAVY_STEPS
def test_other_connections_are_served_between_the_partitions_of_a_heavy_produce(
        mockbroker: MockBroker, patient: RawClient, heavy_batch: bytes) -> None:
    client = patient
    mockbroker.create_topic("t", partitions=PARTITIONS)
    limit = int(BROKER_CONFIGS[validation.MAX_RECORDS_PER_BATCH].default)
    watcher = _watching(mockbroker)
    try:
        resp = client.request(PRODUCE, 9, _heavy_produce(heavy_batch, -1))
        seen_at_answer = len(watcher.seen)
    finally:
        watcher.stop.set()
        watcher.join(30)
    assert watcher.error is None
    # Every partition answered, in the request's order, each appended whole.
    parts = resp.responses[0].partition_responses
    assert [(p.index, p.error_code, p.base_offset) for p in parts] == [(i, 0, 0) for i in range(PARTITIONS)]
    assert all(mockbroker.offsets("t", i)["high_watermark"] == limit for i in range(PARTITIONS))
    # The watcher was answered while the request was in progress: after its first partition was appended
    # and before its last was (without steps, the whole request is one turn of the loop: never seen).
    during = _partly_appended(watcher.seen[:seen_at_answer], limit)
    assert during, f"no answer in the middle of the request: {sorted(set(watcher.seen))}"
    # What the watcher saw only ever grew: partitions are appended in order, each at once.
    assert watcher.seen == sorted(watcher.seen)
    assert set(watcher.seen) <= {(0, 0), (limit, 0), (limit, limit)}


@HEAVY_STEPS
def test_an_acks_0_heavy_produce_is_stepped_and_the_next_request_waits_for_it(
        mockbroker: MockBroker, patient: RawClient, heavy_batch: bytes) -> None:
    client = patient
    mockbroker.create_topic("t", partitions=PARTITIONS)
    limit = int(BROKER_CONFIGS[validation.MAX_RECORDS_PER_BATCH].default)
    watcher = _watching(mockbroker)
    try:
        client.send(PRODUCE, 9, _heavy_produce(heavy_batch, 0))  # no answer
        # The next request on the same connection is handled after the produce is done (Kafka's order).
        resp = client.request(LIST_OFFSETS, 1, {"replica_id": -1, "topics": [
            {"name": "t", "partitions": [{"partition_index": i, "timestamp": -1} for i in range(PARTITIONS)]}]})
    finally:
        watcher.stop.set()
        watcher.join(30)
    assert watcher.error is None
    assert [p.offset for p in resp.topics[0].partitions] == [limit] * PARTITIONS
    assert _partly_appended(watcher.seen, limit)


# -- the steps, driven by hand: one partition per step (mockbroker.max.request.step.ms 0) -----------------


@pytest.fixture
def stepped() -> MockBroker:
    broker = MockBroker(config={STEP_MS: 0}, brokers=2)
    broker.create_topic("t", partitions=3, replication_factor=2, assignments=[[1, 2], [1, 2], [1, 2]])
    return broker


def _call(broker: MockBroker, records: list[bytes | bytearray], *, acks: int = 1, version: int = 9,
          topic_id: Any = None) -> Any:
    ctx = RequestContext(node=broker.nodes[1], listener=broker.cluster.listeners[0], connection_id=1,
                         client_host="127.0.0.1", client_port=1)
    req = Msg(transactional_id=None, acks=acks, timeout_ms=5000, topic_data=[Msg(
        name="t", topic_id=topic_id, partition_data=[Msg(index=i, records=memoryview(bytearray(r)))
                                                     for i, r in enumerate(records)])])
    return handle_produce(ctx, RequestHeader(PRODUCE, version, 1, "steps"), req)


def _next_step(coro: Any) -> Any:
    """Run the handler's coroutine to its next pause (None) or to its end (its answer)."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    return None


def _answers(resp: Msg) -> list[tuple[int, int, int]]:
    return [(p.index, p.error_code, p.base_offset) for p in resp.responses[0].partition_responses]


def test_a_request_within_one_step_is_a_plain_call() -> None:
    broker = MockBroker()
    broker.create_topic("t", partitions=3)
    resp = _call(broker, [make_batch(b"a"), make_batch(b"b"), make_batch(b"c")])
    assert isinstance(resp, Msg) and _answers(resp) == [(0, 0, 0), (1, 0, 0), (2, 0, 0)]


def test_each_step_looks_up_the_topic_again(stepped: MockBroker) -> None:
    coro = _call(stepped, [make_batch(b"a"), make_batch(b"b"), make_batch(b"c")])
    assert _next_step(coro) is None  # partition 0 appended, the rest waits
    assert stepped.offsets("t", 0)["high_watermark"] == 1 and stepped.offsets("t", 1)["high_watermark"] == 0
    stepped.delete_topic("t")
    while (resp := _next_step(coro)) is None:
        pass
    assert _answers(resp) == [(0, 0, 0), (1, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1),
                              (2, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1)]


def test_each_step_checks_leadership_again(stepped: MockBroker) -> None:
    coro = _call(stepped, [make_batch(b"a"), make_batch(b"b"), make_batch(b"c")], version=10)
    assert _next_step(coro) is None
    stepped.move_leader("t", 1, 2)
    while (resp := _next_step(coro)) is None:
        pass
    assert _answers(resp) == [(0, 0, 0), (1, ErrorCode.NOT_LEADER_OR_FOLLOWER, -1), (2, 0, 0)]
    assert resp.responses[0].partition_responses[1].current_leader.leader_id == 2
    assert [n.node_id for n in resp.node_endpoints] == [2]
    assert stepped.offsets("t", 1)["high_watermark"] == 0


def test_a_partition_appended_by_another_client_between_steps_gets_the_next_offsets(stepped: MockBroker) -> None:
    coro = _call(stepped, [make_batch(b"a"), make_batch(b"b", b"c"), make_batch(b"d")])
    assert _next_step(coro) is None
    other = _call(stepped, [make_batch(b"x"), make_batch(b"y", b"z", b"w")])  # partition 0, then 1 in a new step
    assert _next_step(other) is None
    assert _answers(_next_step(other)) == [(0, 0, 1), (1, 0, 0)]
    while (resp := _next_step(coro)) is None:
        pass
    assert _answers(resp) == [(0, 0, 0), (1, 0, 3), (2, 0, 0)]
    assert [r.value for r in stepped.records("t", 1)] == [b"y", b"z", b"w", b"b", b"c"]


def test_a_stepped_acks_0_request_that_failed_closes_the_connection(stepped: MockBroker) -> None:
    coro = _call(stepped, [make_batch(b"a"), make_batch(b"b"), b"\x00" * 70], acks=0)
    while (result := _next_step(coro)) is None:
        pass
    assert isinstance(result, CloseConnection)
    assert stepped.offsets("t", 1)["high_watermark"] == 1


def test_a_stepped_acks_all_request_then_waits_for_a_stalled_follower() -> None:
    # One partition per step, then the acks=all wait of delayed_produce.py: the follower leaves the ISR while
    # the answer is held, so every partition is NOT_ENOUGH_REPLICAS_AFTER_APPEND (records kept at their offsets).
    with MockBroker(brokers=2, config={STEP_MS: 0}).run_in_thread() as broker:
        broker.create_topic("s", partitions=3, assignments=[[1, 2]] * 3, config={"min.insync.replicas": "2"})
        broker.stall_node(2)
        with connect_to(broker, 1) as c:
            body = produce_body("s", make_batch(b"x"), acks=-1)
            body["topic_data"][0]["partition_data"] = [{"index": i, "records": make_batch(bytes([97 + i]))}
                                                       for i in range(3)]
            c.send(PRODUCE, 9, body)
            wait_for(lambda: len(broker.records("s")) == 3)  # every step done, the answer held
            broker.clock.advance(31)  # replica.lag.time.max.ms
            _, resp = c.recv(PRODUCE, 9)
        broker.resume_node(2)
    late = ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND
    assert _answers(resp) == [(0, late, 0), (1, late, 0), (2, late, 0)]


# -- Fetch v0-v3: down-conversion in steps -------------------------------------------------------------


def _fetch_v3(topic: str, partitions: int) -> dict[str, Any]:
    return fetch_body([fetch_topic(topic, *[fetch_partition(i, 0, partition_max_bytes=64 << 20)
                                            for i in range(partitions)])])


def test_other_connections_are_served_while_a_fetch_is_down_converted() -> None:
    # Nine partitions of 100,000 gzip records each, fetched at v3 (magic 1): one partition converted per step
    # (mockbroker.max.request.step.ms 0). Another connection is answered while the fetch is not yet.
    count = 100_000
    batch = bytes(batch_of(b"".join(rec(i) for i in range(count)), count, Codec.GZIP))
    with MockBroker(config={STEP_MS: 0}).run_in_thread() as broker:
        broker.create_topic("t", partitions=PARTITIONS)
        with RawClient(broker.host, broker.port, timeout=300) as heavy:
            resp = heavy.request(PRODUCE, 9, _heavy_produce(batch, -1))
            assert all(p.error_code == 0 for p in resp.responses[0].partition_responses)
            heavy.send(FETCH, 3, _fetch_v3("t", PARTITIONS))
            # received() is answered on the broker's loop: once the fetch is being handled, between two steps.
            assert [r.api_version for r in broker.received(FETCH)] == [3]
            with RawClient(broker.host, broker.port, timeout=300) as other:
                assert other.request(18, 3, {"client_software_name": "x", "client_software_version": "1"}
                                     ).error_code == ErrorCode.NONE
            # Answered while the fetch's answer is not there yet (without steps it is written first).
            assert select.select([heavy.sock], [], [], 0)[0] == []
            _, fetched = heavy.recv(FETCH, 3)
    parts = fetched.responses[0].partitions
    assert [(p.partition_index, p.error_code) for p in parts] == [(i, 0) for i in range(PARTITIONS)]
    for p in parts:
        messages = parse_message_set(bytes(p.records))
        assert len(messages) == count and {m.magic for m in messages} == {1}
        assert (messages[0].offset, messages[-1].offset) == (0, count - 1)


def test_a_stepped_down_conversion_answers_as_one_in_one_go() -> None:
    broker = MockBroker(config={STEP_MS: 0})
    broker.create_topic("t", partitions=3)
    produced = _call(broker, [make_batch(b"a", b"b"), make_batch(b"c"), make_batch(b"d", b"e", b"f")])
    while (resp := _next_step(produced)) is None:
        pass
    assert _answers(resp) == [(0, 0, 0), (1, 0, 0), (2, 0, 0)]
    ctx = RequestContext(node=broker.nodes[1], listener=broker.cluster.listeners[0], connection_id=1,
                         client_host="127.0.0.1", client_port=1)
    req = decode_request(FETCH, 3, encode_request(FETCH, 3, _fetch_v3("t", 3)).getvalue())
    coro = handle_fetch(ctx, RequestHeader(FETCH, 3, 1, "steps"), req)
    assert _next_step(coro) is None and _next_step(coro) is None  # three partitions, three steps
    stepped = _next_step(coro)
    broker.cluster.config.set(STEP_MS, 1000)
    whole = handle_fetch(ctx, RequestHeader(FETCH, 3, 2, "steps"), req)
    assert isinstance(whole, Msg) and isinstance(stepped, Msg)
    assert [[bytes(b) for b in p.records] for p in stepped.responses[0].partitions] == [
        [bytes(b) for b in p.records] for p in whole.responses[0].partitions]
    values = [[m.value for m in parse_message_set(b"".join(p.records))] for p in stepped.responses[0].partitions]
    assert values == [[b"a", b"b"], [b"c"], [b"d", b"e", b"f"]]


def test_a_stepped_request_whose_client_went_away_is_still_appended_whole() -> None:
    # An acks=0 producer closing right after its send: Kafka appends what it has read. The steps go on
    # after the connection is gone (one partition per step here), only the answer is dropped.
    with MockBroker(config={STEP_MS: 0}).run_in_thread() as broker:
        broker.create_topic("t", partitions=PARTITIONS)
        body = produce_body("t", b"", acks=0)
        body["topic_data"][0]["partition_data"] = [{"index": i, "records": make_batch(b"%d" % i)}
                                                   for i in range(PARTITIONS)]
        with RawClient(broker.host, broker.port) as c:
            c.send(PRODUCE, 9, body)
        wait_for(lambda: all(broker.offsets("t", i)["high_watermark"] == 1 for i in range(PARTITIONS)))
        assert [r.value for r in broker.records("t")] == [b"%d" % i for i in range(PARTITIONS)]


def test_the_broker_stop_finishes_the_work_its_nodes_carry_on() -> None:
    # Each node owns the rest of the requests whose connection went away (BrokerNode.carried_on); the
    # broker's stop lets it finish, and cancels what is still running after its bound.
    async def main() -> list[str]:
        done: list[str] = []
        broker = await MockBroker(brokers=2).start()

        async def rest() -> None:
            await asyncio.sleep(0)
            done.append("finished")

        async def stuck() -> None:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                done.append("cancelled")
                raise

        broker.nodes[2].carried_on.start(rest())
        broker.nodes[1].carried_on.start(stuck())
        await broker.stop()
        return done

    assert sorted(asyncio.run(main())) == ["cancelled", "finished"]
