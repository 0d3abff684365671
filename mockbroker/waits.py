"""Waiting for the broker's state: `broker.wait_for_records`, `wait_for_group`, `wait_for_committed`,
`wait_for_transaction`, each sync (blocks the calling thread) and async (`..._async`, awaited).

Driven by the broker's events, not by polling: the model raises its change signal (state/changes.py) when the
Appender appends, a group changes state or commits offsets, or a transactional id changes; the `Waits` part
listens and, once per turn of the broker's loop, checks again the condition of every open wait. A wait whose
condition holds returns; one that is still unmet when its timeout (wall-clock seconds of the waiting test)
runs out raises `WaitTimeout`, an AssertionError whose message says what the broker held instead, e.g.

    wait_for_records('orders', 10): 7 records after 5.0 s; last offsets per partition: {0: 6}

The sync methods are for code outside the broker's loop (a sync test with `run_in_thread` or the pytest
fixtures); on the loop itself (inside `async with MockBroker()`) use the `_async` ones, which also work from
another loop (a pytest-asyncio test with the threaded fixture). Every condition is read on the broker's loop.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from mockbroker.loop_hop import LoopHop
    from mockbroker.node import BrokerNode
    from mockbroker.state.cluster.cluster import Cluster

DEFAULT_TIMEOUT_S = 5.0
TopicPartition = tuple[str, int]
Check = Callable[[], "str | None"]  # None: the condition holds; else what the broker holds instead

R = TypeVar("R")


class WaitTimeout(AssertionError):
    """A wait's condition did not hold within its timeout; the message says what was there instead."""


class Waits:
    """The waits of one broker (`broker.waits`); MockBroker's wait_for_* methods are these."""

    def __init__(self, cluster: Cluster, node: BrokerNode, hop: LoopHop) -> None:
        self._cluster = cluster
        self._node = node
        self._hop = hop
        self._open: list[tuple[Check, asyncio.Future[None]]] = []
        self._recheck_due = False
        cluster.changes.listen(self._changed)

    # -- the conditions ----------------------------------------------------------------------------
    def _records(self, topic: str, count: int, partition: int | None) -> Check:
        def check() -> str | None:
            t = self._cluster.topic(topic)
            if t is None:
                return "no such topic"
            parts = t.partitions if partition is None else [p for p in t.partitions if p.index == partition]
            held = sum(b.record_count for p in parts for b in p.log.batches if not b.is_control)
            if held >= count:
                return None
            last = {p.index: p.log.log_end_offset - 1 for p in parts if p.log.log_end_offset > 0}
            return f"{held} records; last offsets per partition: {last}"
        return check

    def _group(self, group: str, state: str | None, members: int | None) -> Check:
        def check() -> str | None:
            found = None
            if self._node.group_coordinator_started:  # looking must not make the coordinator
                found = next((g for g in self._node.group_coordinator.summaries() if g.group_id == group), None)
            if found is None:
                return "no such group"
            if (state is None or found.state.lower() == state.lower()) and (
                    members is None or len(found.members) == members):
                return None
            ids = [m.member_id for m in found.members]
            return f"group is {found.state} with {len(ids)} member(s) {ids}"
        return check

    def _committed(self, group: str, offsets: dict[TopicPartition, int] | None, topic: str | None) -> Check:
        def check() -> str | None:
            held: dict[TopicPartition, int] = {}
            if self._node.group_coordinator_started:
                held = self._node.group_coordinator.committed(group)
            wanted = dict(offsets or {})
            if topic is not None:  # every partition committed up to the end of what the topic holds
                t = self._cluster.topic(topic)
                if t is None:
                    return "no such topic"
                wanted |= {(topic, p.index): p.log.high_watermark for p in t.partitions}
            short = {tp: held.get(tp) for tp, offset in sorted(wanted.items()) if held.get(tp, -1) < offset}
            if not short:
                return None
            return f"committed {dict(sorted(held.items()))}; short of {wanted}: {short}"
        return check

    def _transaction(self, transactional_id: str, state: str) -> Check:
        def check() -> str | None:
            txn = self._node.txn_coordinator.txns.get(transactional_id)
            if txn is None:
                return "no such transactional id"
            if txn.state.value.lower() == state.lower():
                return None
            return (f"state {txn.state.value} (producer id {txn.producer_id}, epoch {txn.producer_epoch}, "
                    f"partitions {sorted(txn.partitions)})")
        return check

    # -- the public waits (sync, then async) ------------------------------------------------------------
    def wait_for_records(self, topic: str, count: int, timeout: float = DEFAULT_TIMEOUT_S,
                         partition: int | None = None) -> None:
        """Block until the topic (or one partition) holds at least `count` records, as broker.records()
        counts them (control records left out, those of open or aborted transactions in); WaitTimeout
        after `timeout` seconds, naming how many there were and the last offset of each partition."""
        self._block(self.wait_for_records_async(topic, count, timeout, partition))

    def wait_for_group(self, group: str, state: str | None = None, members: int | None = None,
                       timeout: float = DEFAULT_TIMEOUT_S) -> None:
        """Block until the group exists, is in `state` (as broker.groups() names it: "Stable", "Empty",
        any case; None: any) and has exactly `members` members (None: any number); WaitTimeout names the
        state and the members it had instead. Checked each time the group changes state (classic) or
        changes at all (KIP-848)."""
        self._block(self.wait_for_group_async(group, state, members, timeout))

    def wait_for_committed(self, group: str, offsets: dict[TopicPartition, int] | None = None, *,
                           topic: str | None = None, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        """Block until the group has committed at least each offset of {(topic, partition): offset}, and,
        with topic=, every partition of that topic up to its high watermark (all it holds consumed);
        WaitTimeout names what was committed instead."""
        self._block(self.wait_for_committed_async(group, offsets, topic=topic, timeout=timeout))

    def wait_for_transaction(self, transactional_id: str, state: str = "CompleteCommit",
                             timeout: float = DEFAULT_TIMEOUT_S) -> None:
        """Block until the transactional id is in `state` (Kafka's names, as broker.transactions() gives
        them: "Ongoing", "CompleteCommit", "CompleteAbort", "Empty"...); WaitTimeout names the state it
        was in instead."""
        self._block(self.wait_for_transaction_async(transactional_id, state, timeout))

    async def wait_for_records_async(self, topic: str, count: int, timeout: float = DEFAULT_TIMEOUT_S,
                                     partition: int | None = None) -> None:
        """wait_for_records, awaited (on the broker's loop or another)."""
        what = f"wait_for_records({topic!r}, {count}" + (f", partition={partition})" if partition is not None else ")")
        await self._await(what, lambda: self._records(topic, count, partition), timeout)

    async def wait_for_group_async(self, group: str, state: str | None = None, members: int | None = None,
                                   timeout: float = DEFAULT_TIMEOUT_S) -> None:
        """wait_for_group, awaited (on the broker's loop or another)."""
        what = f"wait_for_group({group!r}, state={state!r}, members={members!r})"
        await self._await(what, lambda: self._group(group, state, members), timeout)

    async def wait_for_committed_async(self, group: str, offsets: dict[TopicPartition, int] | None = None, *,
                                       topic: str | None = None, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        """wait_for_committed, awaited (on the broker's loop or another)."""
        if offsets is None and topic is None:
            raise ValueError("give the offsets to wait for, or topic=")
        what = f"wait_for_committed({group!r}, {offsets!r}, topic={topic!r})"
        await self._await(what, lambda: self._committed(group, offsets, topic), timeout)

    async def wait_for_transaction_async(self, transactional_id: str, state: str = "CompleteCommit",
                                         timeout: float = DEFAULT_TIMEOUT_S) -> None:
        """wait_for_transaction, awaited (on the broker's loop or another)."""
        what = f"wait_for_transaction({transactional_id!r}, state={state!r})"
        await self._await(what, lambda: self._transaction(transactional_id, state), timeout)

    # -- the machinery ---------------------------------------------------------------------------------
    def _changed(self) -> None:
        """The change signal: look again at the open waits, once, when the broker's loop is next free (a
        request's changes are whole by then)."""
        loop = self._hop.loop
        if self._open and not self._recheck_due and loop is not None:
            self._recheck_due = True
            loop.call_soon(self._recheck)

    def _recheck(self) -> None:
        self._recheck_due = False
        for check, future in list(self._open):
            if not future.done() and check() is None:
                future.set_result(None)

    async def _wait(self, what: str, check: Check, timeout: float) -> None:
        """On the broker's loop: return when check() holds, or raise WaitTimeout after timeout seconds."""
        if check() is None:
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (check, future)
        self._open.append(entry)
        try:
            await asyncio.wait_for(future, timeout)
        except TimeoutError:
            head, sep, details = str(check()).partition("; ")  # "7 records after 5.0 s; last offsets ..."
            raise WaitTimeout(f"{what}: {head} after {timeout} s{sep}{details}") from None
        finally:
            self._open.remove(entry)

    async def _await(self, what: str, make_check: Callable[[], Check], timeout: float) -> None:
        loop = self._hop.loop
        if loop is None:
            self._not_running(what, make_check())
            return
        if asyncio.get_running_loop() is loop:
            await self._wait(what, make_check(), timeout)
        else:  # another loop (a pytest-asyncio test, the broker on its thread): hop over and wait there
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._wait(what, make_check(), timeout),
                                                                       loop))

    def _block(self, awaited: Coroutine[Any, Any, None]) -> None:
        """Run a wait from a thread other than the broker's loop and block until it ends."""
        loop = self._hop.loop
        if loop is None:  # not running: nothing can change, so look once
            asyncio.run(awaited)
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop or threading.current_thread() is self._hop.thread:
            awaited.close()
            raise RuntimeError("a sync wait on the broker's own event loop would block it: "
                               "use `await broker.wait_for_..._async(...)` there")
        asyncio.run_coroutine_threadsafe(awaited, loop).result()

    def _not_running(self, what: str, check: Check) -> None:
        problem = check()
        if problem is not None:
            raise WaitTimeout(f"{what}: {problem}; the broker is not running, so nothing can change")
