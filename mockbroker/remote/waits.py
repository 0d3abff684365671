"""The sync waits of the remote target (wait_for_records, wait_for_group, wait_for_committed,
wait_for_transaction) and their `_async` forms: the same conditions as mockbroker/waits.py, checked by
asking the cluster again every 50 ms until they hold or the timeout (wall-clock seconds) runs out, then
WaitTimeout naming what the cluster held instead. A real cluster sends no change signal, so polling is the
only way. The `_async` forms run the sync wait in a worker thread (asyncio.to_thread); the connections
take one request at a time (client.py's lock), so other calls of the test may run meanwhile."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from mockbroker.waits import DEFAULT_TIMEOUT_S, WaitTimeout

if TYPE_CHECKING:
    from mockbroker.inspection import RecordInfo
    from mockbroker.state.groups.common import GroupSummary
    from mockbroker.state.txn.metadata import TransactionInfo

POLL_S = 0.05
TopicPartition = tuple[str, int]


class RemoteWaits:
    """RemoteBroker's waits, built on its inspection calls."""

    if TYPE_CHECKING:  # what the waits read, RemoteBroker's inspection calls
        def records(self, topic: str, partition: int | None = None) -> list[RecordInfo]: ...
        def groups(self) -> list[GroupSummary]: ...
        def committed(self, group: str) -> dict[tuple[str, int], int]: ...
        def transactions(self) -> list[TransactionInfo]: ...
        def offsets(self, topic: str, partition: int = 0) -> dict[str, int]: ...

    def _poll(self, what: str, check: Callable[[], str | None], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                held = check()
            except KeyError as exc:
                held = str(exc)
            if held is None:
                return
            if time.monotonic() >= deadline:
                raise WaitTimeout(f"{what}: {held} after {timeout} s")
            time.sleep(POLL_S)

    def wait_for_records(self, topic: str, count: int, timeout: float = DEFAULT_TIMEOUT_S,
                         partition: int | None = None) -> None:
        """Block until the topic (or one partition) holds at least `count` records, as records() counts them."""
        def check() -> str | None:
            held = self.records(topic, partition)
            if len(held) >= count:
                return None
            last: dict[int, int] = {}
            for r in held:
                last[r.partition] = r.offset
            return f"{len(held)} records; last offsets per partition: {last}"
        what = f"wait_for_records({topic!r}, {count}" + (f", partition={partition})" if partition is not None else ")")
        self._poll(what, check, timeout)

    def wait_for_group(self, group: str, state: str | None = None, members: int | None = None,
                       timeout: float = DEFAULT_TIMEOUT_S) -> None:
        """Block until the group exists, is in `state` (any case; None: any) with `members` members (None: any)."""
        def check() -> str | None:
            found = next((g for g in self.groups() if g.group_id == group), None)
            if found is None:
                return "no such group"
            if (state is None or found.state.lower() == state.lower()) and (
                    members is None or len(found.members) == members):
                return None
            return f"group is {found.state} with {len(found.members)} member(s) {[m.member_id for m in found.members]}"
        self._poll(f"wait_for_group({group!r}, state={state!r}, members={members!r})", check, timeout)

    def wait_for_committed(self, group: str, offsets: dict[TopicPartition, int] | None = None, *,
                           topic: str | None = None, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        """Block until the group committed at least each offset given, and with topic= every partition of it
        up to its high watermark."""
        def check() -> str | None:
            held = self.committed(group)
            wanted = dict(offsets or {})
            if topic is not None:
                index = 0
                while True:
                    try:
                        wanted[(topic, index)] = self.offsets(topic, index)["high_watermark"]
                    except KeyError:
                        break
                    index += 1
            short = {tp: held.get(tp) for tp, offset in sorted(wanted.items()) if held.get(tp, -1) < offset}
            return None if not short else f"committed {held}; short of {wanted}: {short}"
        self._poll(f"wait_for_committed({group!r})", check, timeout)

    def wait_for_transaction(self, transactional_id: str, state: str = "CompleteCommit",
                             timeout: float = DEFAULT_TIMEOUT_S) -> None:
        """Block until the transactional id is in `state` (Kafka's names: "Ongoing", "CompleteCommit"...)."""
        def check() -> str | None:
            txn = next((t for t in self.transactions() if t.transactional_id == transactional_id), None)
            if txn is None:
                return "no such transactional id"
            if txn.state.lower() == state.lower():
                return None
            return f"state {txn.state} (producer id {txn.producer_id}, epoch {txn.producer_epoch})"
        self._poll(f"wait_for_transaction({transactional_id!r}, {state!r})", check, timeout)

    async def wait_for_records_async(self, topic: str, count: int, timeout: float = DEFAULT_TIMEOUT_S,
                                     partition: int | None = None) -> None:
        """wait_for_records, awaited (in a worker thread)."""
        await asyncio.to_thread(self.wait_for_records, topic, count, timeout, partition)

    async def wait_for_group_async(self, group: str, state: str | None = None, members: int | None = None,
                                   timeout: float = DEFAULT_TIMEOUT_S) -> None:
        """wait_for_group, awaited (in a worker thread)."""
        await asyncio.to_thread(self.wait_for_group, group, state, members, timeout)

    async def wait_for_committed_async(self, group: str, offsets: dict[TopicPartition, int] | None = None, *,
                                       topic: str | None = None, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        """wait_for_committed, awaited (in a worker thread)."""
        await asyncio.to_thread(lambda: self.wait_for_committed(group, offsets, topic=topic, timeout=timeout))

    async def wait_for_transaction_async(self, transactional_id: str, state: str = "CompleteCommit",
                                         timeout: float = DEFAULT_TIMEOUT_S) -> None:
        """wait_for_transaction, awaited (in a worker thread)."""
        await asyncio.to_thread(self.wait_for_transaction, transactional_id, state, timeout)
