"""The bytes of one partition log's batches, in a few large buffers, and compact columns indexing them.

No Python object per stored batch (issue #37): a batch's bytes are copied once, on append, into the log's
current chunk (a private anonymous mmap: the kernel gives it pages only as they are written, so an unfilled tail
costs no memory), and three array('q') columns hold, per batch, its base offset, its position and the
running maximum of the max timestamps (the time index). Every other header field (last offset delta,
timestamps, producer id/epoch, sequences, record count, attributes, partition leader epoch) is read from
the batch's own 61-byte header when asked for (`header`, `batch`).

- Positions are global: chunk k covers [starts[k], starts[k] + len(chunk)); positions only grow with the batch
  index, so bisect over `starts` finds a batch's chunk, and dropping batches from the front drops the chunks
  before the first one left.
- A chunk is never resized or rewritten: bytes once written stay as they are (a view handed to a Fetch answer
  or held by a snapshot stays valid). Only the tail chunk is written, past everything any batch uses; a
  truncation from the end does not move the write position back. A copy (`__deepcopy__`, for snapshots)
  shares every chunk and never writes into the tail it shares: its next append opens a chunk of its own.
- Chunks grow from CHUNK_FIRST to CHUNK_MAX bytes; a batch larger than the next chunk gets a chunk of its own.

`StoredBatches` is the sequence PartitionLog.batches answers: it makes a StoredBatch for the index asked for,
each time, and keeps none.
"""

from __future__ import annotations

import bisect
import mmap
import struct
import sys
from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

from mockbroker.protocol.records.batch import (
    CONTROL_MASK,
    HEADER,
    LAST_OFFSET_DELTA,
    MAX_TIMESTAMP,
    TRANSACTIONAL_MASK,
    last_sequence_of,
)
from mockbroker.state.log.stored_batch import StoredBatch

CHUNK_FIRST = 256 * 1024
CHUNK_MAX = 8 * 1024 * 1024

_LENGTH = struct.Struct(">qi")  # baseOffset, batchLength: the batch's size is batchLength + 12
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
# Private anonymous memory: mmap.mmap(-1, n) alone maps shared anonymous memory, which Linux backs with shmem
# (a tmpfs page cache: each first touch costs several times an ordinary page fault).
_PRIVATE: int | None = (mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS) if hasattr(mmap, "MAP_ANONYMOUS") else None
# A batch of POPULATE_MIN bytes or more has the pages it is copied into faulted in by one
# madvise(MADV_POPULATE_WRITE) first (Linux 5.14+; the constant is 23 where Python does not name it): one
# system call instead of a page fault per 4 KiB page, and exactly the pages the copy writes (nothing ahead).
# Where the kernel refuses it (older kernels), the copy faults them in as before.
POPULATE_MIN = 64 * 1024
_POPULATE_WRITE: int | None = getattr(mmap, "MADV_POPULATE_WRITE", 23 if sys.platform == "linux" else None)
_PAGE = mmap.PAGESIZE


def stored_batch(view: memoryview) -> StoredBatch:
    """A StoredBatch of a stored batch's bytes, its fields read from its header."""
    (base_offset, _length, epoch, _magic, _crc, attributes, last_offset_delta, base_timestamp, max_timestamp,
     producer_id, producer_epoch, base_sequence, record_count) = HEADER.unpack_from(view)
    return StoredBatch(base_offset, base_offset + last_offset_delta, max_timestamp, base_timestamp, view,
                       producer_id, producer_epoch, base_sequence, last_sequence_of(base_sequence, last_offset_delta),
                       record_count, bool(attributes & TRANSACTIONAL_MASK), bool(attributes & CONTROL_MASK), epoch)


class BatchStore:
    """The batches of one log: their bytes in chunks, their base offsets, positions and running max timestamps."""

    def __init__(self) -> None:
        self.base_offsets = array("q")
        self.max_ts_running = array("q")
        self.positions = array("q")
        self._views: list[memoryview] = []  # one per chunk, in position order
        self._starts: list[int] = []  # the chunks' global start positions
        self._tail: memoryview | None = None  # the chunk appends write into (None: the next append opens one)
        self._tail_map: mmap.mmap | None = None  # the tail's mmap (for madvise)
        self._used = 0  # bytes of the tail used
        self._end = 0  # the global position after the last chunk
        self._next_size = CHUNK_FIRST

    def __len__(self) -> int:
        return len(self.positions)

    def __deepcopy__(self, memo: dict[int, Any]) -> BatchStore:
        """A copy for a snapshot: the columns copied (one memcpy each), the chunks shared, the tail not written."""
        new = BatchStore.__new__(BatchStore)
        memo[id(self)] = new
        new.base_offsets = array("q", self.base_offsets)
        new.max_ts_running = array("q", self.max_ts_running)
        new.positions = array("q", self.positions)
        new._views = list(self._views)
        new._starts = list(self._starts)
        new._tail = None
        new._tail_map = None
        new._used = 0
        new._end = self._end
        new._next_size = self._next_size
        return new

    # -- append ------------------------------------------------------------------------------------
    def append(self, data: Any, base_offset: int, max_timestamp: int) -> memoryview:
        """Copy a batch's bytes in (one memcpy) and index it; the stored bytes' view."""
        size = len(data)
        tail = self._tail
        if tail is None or self._used + size > len(tail):
            tail = self._open(size)
        pos = self._used
        if size >= POPULATE_MIN and _POPULATE_WRITE is not None:
            self._populate(pos, size)
        tail[pos:pos + size] = data
        self._used = pos + size
        self.positions.append(self._starts[-1] + pos)
        self.base_offsets.append(base_offset)
        running = self.max_ts_running
        prev = running[-1] if running else -1
        running.append(max_timestamp if max_timestamp > prev else prev)
        return tail[pos:pos + size]

    def _open(self, size: int) -> memoryview:
        """Start a new chunk for a batch of `size` bytes: the next size, or one of its own when larger."""
        capacity = self._next_size
        self._next_size = min(capacity * 2, CHUNK_MAX)
        if size > capacity:
            capacity = size  # a chunk of its own, written whole: no room left after it
        chunk = mmap.mmap(-1, capacity) if _PRIVATE is None else mmap.mmap(-1, capacity, flags=_PRIVATE)
        view = memoryview(chunk)
        self._views.append(view)
        self._starts.append(self._end)
        self._end += capacity
        self._tail, self._tail_map, self._used = view, chunk, 0
        return view

    def _populate(self, pos: int, size: int) -> None:
        """Fault in the tail's pages under [pos, pos + size) with one system call."""
        global _POPULATE_WRITE
        assert self._tail_map is not None and _POPULATE_WRITE is not None
        start = pos - pos % _PAGE
        try:
            self._tail_map.madvise(_POPULATE_WRITE, start, min(pos + size + _PAGE - 1, len(self._tail_map)) // _PAGE
                                   * _PAGE - start)
        except OSError:  # a kernel before 5.14 (EINVAL); out of memory is left to the copy to meet
            _POPULATE_WRITE = None

    def adopt(self, chunk: memoryview, sizes: Iterable[int]) -> None:
        """Take `chunk` (whole batches back to back, with their sizes, e.g. a segment file's bytes as recovery
        read them) as a chunk of its own, without a copy; it is never written. Appends go to a new chunk."""
        self._views.append(chunk)
        self._starts.append(self._end)
        pos = 0
        running = self.max_ts_running
        for size in sizes:
            self.positions.append(self._end + pos)
            self.base_offsets.append(_I64.unpack_from(chunk, pos)[0])
            ts = _I64.unpack_from(chunk, pos + MAX_TIMESTAMP)[0]
            prev = running[-1] if running else -1
            running.append(ts if ts > prev else prev)
            pos += size
        self._end += len(chunk)
        self._tail, self._tail_map, self._used = None, None, 0

    # -- reads -------------------------------------------------------------------------------------
    def _locate(self, i: int) -> tuple[memoryview, int]:
        pos = self.positions[i]
        k = bisect.bisect_right(self._starts, pos) - 1
        return self._views[k], pos - self._starts[k]

    def data(self, i: int) -> memoryview:
        """Batch i's bytes (a view of its chunk)."""
        view, off = self._locate(i)
        return view[off:off + _LENGTH.unpack_from(view, off)[1] + 12]

    def size(self, i: int) -> int:
        view, off = self._locate(i)
        return int(_LENGTH.unpack_from(view, off)[1]) + 12

    def last_offset(self, i: int) -> int:
        view, off = self._locate(i)
        return int(self.base_offsets[i] + _I32.unpack_from(view, off + LAST_OFFSET_DELTA)[0])

    def max_timestamp(self, i: int) -> int:
        view, off = self._locate(i)
        return int(_I64.unpack_from(view, off + MAX_TIMESTAMP)[0])

    def batch(self, i: int) -> StoredBatch:
        """A StoredBatch of batch i, made now (the store keeps none)."""
        return stored_batch(self.data(i))

    def read(self, i: int, limit: int, max_bytes: int, min_one: bool) -> tuple[list[memoryview], int]:
        """Views of whole batches from index i while their base offset is below `limit`, up to max_bytes in all
        (the first one even if larger when min_one): what a Fetch serves."""
        out: list[memoryview] = []
        total = 0
        n = len(self.positions)
        bases, positions, starts, views = self.base_offsets, self.positions, self._starts, self._views
        k = -1
        chunk_end = -1
        while i < n:
            if bases[i] >= limit:
                break
            pos = positions[i]
            if pos >= chunk_end or pos < starts[k]:
                k = bisect.bisect_right(starts, pos) - 1
                chunk_end = starts[k] + len(views[k])
            view = views[k]
            off = pos - starts[k]
            size = _LENGTH.unpack_from(view, off)[1] + 12
            if total + size > max_bytes and not (min_one and not out):
                break
            out.append(view[off:off + size])
            total += size
            i += 1
        return out, total

    # -- dropping batches --------------------------------------------------------------------------
    def truncate(self, keep: int) -> int:
        """Keep the first `keep` batches; the bytes dropped. The write position stays (a snapshot may hold them)."""
        dropped = sum(self.size(i) for i in range(keep, len(self.positions)))
        del self.positions[keep:]
        del self.base_offsets[keep:]
        del self.max_ts_running[keep:]
        self._release()
        return dropped

    def drop_front(self, count: int) -> int:
        """Drop the first `count` batches; the bytes dropped. The time index is recomputed from what is left."""
        if count <= 0:
            return 0
        dropped = sum(self.size(i) for i in range(count))
        old = self.max_ts_running
        # Past the first entry above the dropped batches' maximum, the running maximum is a kept batch's:
        # only the entries before it are recomputed (a few, when timestamps grow with offsets).
        same_from = bisect.bisect_right(old, old[count - 1], count)
        del self.positions[:count]
        del self.base_offsets[:count]
        # And once a recomputed entry equals the old one, every later one does too (both go on as the max of the
        # same timestamps): with equal timestamps, that is at once, not at the end of the log.
        running = -1
        ts = array("q")
        for i in range(same_from - count):
            running = max(running, self.max_timestamp(i))
            if running == old[count + i]:
                same_from = count + i
                break
            ts.append(running)
        self.max_ts_running = ts + old[same_from:]
        self._release()
        return dropped

    def _release(self) -> None:
        """Forget the chunks no batch is in any more (the tail stays while appends write into it)."""
        if self.positions:
            first = bisect.bisect_right(self._starts, self.positions[0]) - 1
            last = bisect.bisect_right(self._starts, self.positions[-1]) - 1
        else:
            first, last = len(self._views), -1
        keep = [k for k in range(len(self._views)) if first <= k <= last or self._views[k] is self._tail]
        if len(keep) < len(self._views):
            self._views = [self._views[k] for k in keep]
            self._starts = [self._starts[k] for k in keep]

    def replace(self, batches: Iterable[Any]) -> None:
        """Hold exactly `batches` (byte buffers of whole batches, with their base offsets set), copied into new
        chunks: how the cleaner installs a pass and recovery loads a log."""
        fresh = BatchStore()
        for data in batches:
            base_offset, = _I64.unpack_from(data, 0)
            max_timestamp, = _I64.unpack_from(data, MAX_TIMESTAMP)
            fresh.append(data, base_offset, max_timestamp)
        self.__dict__.update(fresh.__dict__)  # the old chunks go with the last view of them


class StoredBatches(Sequence[StoredBatch]):
    """A log's batches as a sequence of StoredBatch, each made when asked for (PartitionLog.batches): for
    inspection, the cleaner and tests. The hot paths read the store's columns instead."""

    __slots__ = ("_store",)

    def __init__(self, store: BatchStore) -> None:
        self._store = store

    def __len__(self) -> int:
        return len(self._store)

    @overload
    def __getitem__(self, index: int) -> StoredBatch: ...
    @overload
    def __getitem__(self, index: slice) -> list[StoredBatch]: ...
    def __getitem__(self, index: int | slice) -> StoredBatch | list[StoredBatch]:
        store = self._store
        if isinstance(index, slice):
            return [store.batch(i) for i in range(*index.indices(len(store)))]
        n = len(store)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("batch index out of range")
        return store.batch(index)

    def __iter__(self) -> Iterator[StoredBatch]:
        store = self._store
        i = 0
        while i < len(store):
            yield store.batch(i)
            i += 1

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, StoredBatches)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"StoredBatches({list(self)!r})"
