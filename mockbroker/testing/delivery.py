"""Delivery checks: what producers were told was acknowledged against what consumers read.

    from mockbroker.testing.delivery import Acked, Read, check_delivery

    acked = [Acked.of(m) for m in delivery_reports]          # confluent-kafka Messages from on_delivery
    read = [Read.of(m) for m in consumed]                    # Messages / ConsumerRecords / tuples
    check_delivery(acked, read, broker=broker, group="g").assert_ok()

One call reports every delivery defect, each kind as a list a test can assert on:

- lost: acknowledged, never read (matched by topic, partition and offset; by content when the client
  gave no offset, acks=0);
- duplicated: the same offset read more than once, or the same key and value stored at more offsets than
  the producers were told it was acknowledged (every content read twice with `distinct_values=True`);
- reordered: per partition, acknowledged offsets out of the order the acks are listed in (the send
  order); per partition, a consumer reading an offset below one it already read; per key, records read in
  another order than they were acknowledged; per producer (records from the broker's log), sequences that
  do not grow with the offsets;
- aborted_read: records of aborted (or still open) transactions among the reads, for read_committed
  consumers: the transactions come from the broker's batches and control markers (`broker=`) or from
  `aborted={(topic, partition): [(first, last), ...]}`;
- committed_ahead: a group's committed offset past records it never processed (`broker.committed(group)`
  or `committed=`, against the reads or `processed=`; control markers and aborted records, which no
  consumer sees, are not counted when the broker is given);
- unacknowledged: read records no ack names; a defect only with `only_acked=True`.

The adapters use duck typing, so no client library is imported here: `Acked.of` takes a confluent-kafka
delivery report Message, an aiokafka or kafka-python RecordMetadata (with the key and value sent), or a
Java harness "sent" line; `Read.of` takes a confluent-kafka Message, an aiokafka or kafka-python
ConsumerRecord, a `broker.records()` RecordInfo, a Java harness "record" line, or a tuple
(topic, partition, offset[, key[, value]]).
"""

from __future__ import annotations

import base64
import json
import threading
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mockbroker.protocol.records.batch import ControlType

if TYPE_CHECKING:  # pragma: no cover
    from mockbroker.server import MockBroker

__all__ = ["Acked", "Acks", "CommittedAhead", "DeliveryError", "DeliveryReport", "Duplicate", "Read",
           "Reordered", "aborted_ranges", "check_delivery"]

TP = tuple[str, int]
Content = tuple[str, bytes | None, bytes | None]  # topic, key, value


class DeliveryError(AssertionError):
    """A delivery check failed; the message lists what went wrong, `report` holds the lists."""

    def __init__(self, report: DeliveryReport) -> None:
        super().__init__(report.describe())
        self.report = report


def _bytes(data: Any) -> bytes | None:
    if data is None:
        return None
    if isinstance(data, str):
        return data.encode()
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"a key or value is bytes, str or None, not {type(data).__name__}")
    return bytes(data)


def _line(line: Mapping[str, Any] | str) -> Mapping[str, Any]:
    return json.loads(line) if isinstance(line, str) else line


def _java_bytes(line: Mapping[str, Any], name: str) -> bytes | None:
    """A key or value of a Java harness line: base64 in <name>_b64, else the text in <name>."""
    if line.get(name + "_b64") is not None:
        return base64.b64decode(line[name + "_b64"])
    return _bytes(line.get(name))


def _confluent(msg: Any) -> tuple[str, int, int, bytes | None, bytes | None]:
    error = msg.error()
    if error is not None:
        raise ValueError(f"a message with an error is no record: {error}")
    return msg.topic(), msg.partition(), msg.offset(), _bytes(msg.key()), _bytes(msg.value())


@dataclass(frozen=True)
class Acked:
    """A record a producer was told was written: where (offset -1: the client was not told) and what.
    `has_content` is False when the ack did not carry the key and value (then only the offset is matched)."""

    topic: str
    partition: int
    offset: int
    key: bytes | None = None
    value: bytes | None = None
    has_content: bool = True

    def where(self) -> str:
        return f"{self.topic}[{self.partition}]@{self.offset}" if self.offset >= 0 else \
            f"{self.topic}[{self.partition}]"

    @classmethod
    def from_confluent(cls, msg: Any) -> Acked:
        """A confluent-kafka delivery report (the Message on_delivery gets); ValueError if it failed."""
        topic, partition, offset, key, value = _confluent(msg)
        return cls(topic, partition, offset if offset is not None and offset >= 0 else -1, key, value)

    @classmethod
    def from_metadata(cls, metadata: Any, key: Any = None, value: Any = None, *, has_content: bool = True) -> Acked:
        """An aiokafka (send_and_wait) or kafka-python (future.get()) RecordMetadata, with what was sent."""
        offset = metadata.offset
        return cls(metadata.topic, metadata.partition, offset if offset is not None and offset >= 0 else -1,
                   _bytes(key), _bytes(value), has_content)

    @classmethod
    def from_java(cls, line: Mapping[str, Any] | str, key: Any = None, value: Any = None, *,
                  has_content: bool = True) -> Acked:
        """A "sent" line of the Java harness (tests/interop/harness/java: {"type": "sent", "topic",
        "partition", "offset", ...}, a dict or its JSON text), with the key and value that record had."""
        data = _line(line)
        offset = data.get("offset")
        return cls(data["topic"], int(data["partition"]), -1 if offset is None else int(offset),
                   _bytes(key), _bytes(value), has_content)

    @classmethod
    def of(cls, obj: Any) -> Acked:
        """An Acked from a confluent-kafka delivery report or a Java "sent" line (RecordMetadata carries no
        key or value: use from_metadata)."""
        if isinstance(obj, Acked):
            return obj
        if callable(getattr(obj, "error", None)):
            return cls.from_confluent(obj)
        if isinstance(obj, (str, Mapping)):
            return cls.from_java(obj, has_content=False)
        raise TypeError(f"cannot read an acknowledgement from {type(obj).__name__}: use Acked.from_metadata")


@dataclass(frozen=True)
class Read:
    """A record a consumer read (or the broker's log holds: producer id, epoch and sequence are known then)."""

    topic: str
    partition: int
    offset: int
    key: bytes | None = None
    value: bytes | None = None
    producer_id: int = -1
    producer_epoch: int = -1
    sequence: int = -1

    def where(self) -> str:
        return f"{self.topic}[{self.partition}]@{self.offset}"

    @classmethod
    def from_confluent(cls, msg: Any) -> Read:
        """A confluent-kafka consumer Message; ValueError for an error event (EOF and the like)."""
        return cls(*_confluent(msg))

    @classmethod
    def from_record(cls, rec: Any) -> Read:
        """An aiokafka or kafka-python ConsumerRecord, or a RecordInfo of broker.records()."""
        return cls(rec.topic, rec.partition, rec.offset, _bytes(getattr(rec, "key", None)),
                   _bytes(getattr(rec, "value", None)), getattr(rec, "producer_id", -1),
                   getattr(rec, "producer_epoch", -1), getattr(rec, "sequence", -1))

    @classmethod
    def from_java(cls, line: Mapping[str, Any] | str) -> Read:
        """A "record" line of the Java harness (key_b64 / value_b64, or key / value as text)."""
        data = _line(line)
        return cls(data["topic"], int(data["partition"]), int(data["offset"]), _java_bytes(data, "key"),
                   _java_bytes(data, "value"))

    @classmethod
    def of(cls, obj: Any) -> Read:
        """A Read from any of the forms above, or a tuple (topic, partition, offset[, key[, value]])."""
        if isinstance(obj, Read):
            return obj
        if isinstance(obj, tuple) and not hasattr(obj, "_fields"):  # kafka-python's records are named tuples
            topic, partition, offset, *rest = obj
            key, value = (list(rest) + [None, None])[:2]
            return cls(topic, partition, offset, _bytes(key), _bytes(value))
        if isinstance(obj, (str, Mapping)):
            return cls.from_java(obj)
        if callable(getattr(obj, "error", None)):
            return cls.from_confluent(obj)
        return cls.from_record(obj)


class Acks:
    """A confluent-kafka on_delivery callback that keeps what was acknowledged and what failed.

        acks = Acks()
        producer.produce("t", b"v", on_delivery=acks)
        producer.flush()
        check_delivery(acks.acked, read).assert_ok()
    """

    def __init__(self) -> None:
        self.acked: list[Acked] = []
        self.failed: list[tuple[Any, Any]] = []  # (error, message)
        self._lock = threading.Lock()

    def __call__(self, err: Any, msg: Any) -> None:
        with self._lock:
            if err is not None:
                self.failed.append((err, msg))
            else:
                self.acked.append(Acked.from_confluent(msg))


@dataclass(frozen=True)
class Duplicate:
    """One record seen too often: `how` is "read" (one offset read `count` times) or "stored" (one key and
    value at `count` offsets, `acked` times acknowledged)."""

    how: str
    topic: str
    key: bytes | None
    value: bytes | None
    offsets: list[tuple[int, int]]  # (partition, offset)
    count: int
    acked: int = 0


@dataclass(frozen=True)
class Reordered:
    """An order broken: `how` is "sent" (acknowledged offsets against the send order), "read" (a consumer's
    offsets), "key" (a key's records read in another order than acknowledged) or "sequence" (a producer's
    sequences against the log's offsets). `offset` came after `after`, which should have followed it."""

    how: str
    topic: str
    partition: int
    offset: int
    after: int
    key: bytes | None = None
    value: bytes | None = None
    after_partition: int = -1  # "key": the partition of `after`, when it is another one


@dataclass(frozen=True)
class CommittedAhead:
    """A committed offset past records the group never processed (`unprocessed`: their offsets)."""

    group: str | None
    topic: str
    partition: int
    committed: int
    processed_up_to: int  # the highest processed offset, -1 if none
    unprocessed: list[int]


@dataclass
class DeliveryReport:
    """What check_delivery found; `ok` when there is no defect, `assert_ok()` raises with the diff."""

    acked: int
    read: int
    lost: list[Acked] = field(default_factory=list)
    duplicated: list[Duplicate] = field(default_factory=list)
    reordered: list[Reordered] = field(default_factory=list)
    aborted_read: list[Read] = field(default_factory=list)
    committed_ahead: list[CommittedAhead] = field(default_factory=list)
    unacknowledged: list[Read] = field(default_factory=list)
    only_acked: bool = False
    limit: int = 10

    @property
    def ok(self) -> bool:
        return not (self.lost or self.duplicated or self.reordered or self.aborted_read or self.committed_ahead
                    or (self.only_acked and self.unacknowledged))

    def assert_ok(self) -> None:
        if not self.ok:
            raise DeliveryError(self)

    def __str__(self) -> str:
        return self.describe()

    def describe(self) -> str:
        """A summary line, then up to `limit` entries of each kind found."""
        kinds: list[tuple[str, list[Any]]] = [("lost", self.lost), ("duplicated", self.duplicated), ("reordered", self.reordered),
                 ("aborted read", self.aborted_read), ("committed ahead", self.committed_ahead)]
        if self.only_acked:
            kinds.append(("unacknowledged", self.unacknowledged))
        counts = ", ".join(f"{len(items)} {name}" for name, items in kinds)
        head = "delivery ok" if self.ok else "delivery check failed"
        lines = [f"{head}: {counts} ({self.acked} acknowledged, {self.read} read)"]
        sections: list[tuple[str, list[str]]] = [
            ("lost: acknowledged, never read", [f"{a.where()} {_kv(a.key, a.value)}" for a in self.lost]),
            ("duplicated", [_duplicate(d) for d in self.duplicated]),
            ("reordered", [_reordered(r) for r in self.reordered]),
            ("aborted read: records of aborted or open transactions read",
             [f"{r.where()} {_kv(r.key, r.value)}" for r in self.aborted_read]),
            ("committed ahead: committed past unprocessed records", [_ahead(c) for c in self.committed_ahead]),
        ]
        if self.only_acked:
            sections.append(("unacknowledged: read, never acknowledged",
                             [f"{r.where()} {_kv(r.key, r.value)}" for r in self.unacknowledged]))
        for title, entries in sections:
            if entries:
                lines.append(f"{title} ({len(entries)}):")
                lines += [f"  {e}" for e in entries[:self.limit]]
                if len(entries) > self.limit:
                    lines.append(f"  ... and {len(entries) - self.limit} more")
        return "\n".join(lines)


def _short(data: bytes | None, width: int = 40) -> str:
    text = repr(data)
    return text if len(text) <= width else text[:width - 3] + "..."


def _kv(key: bytes | None, value: bytes | None) -> str:
    return f"key={_short(key)} value={_short(value)}"


def _duplicate(d: Duplicate) -> str:
    where = ", ".join(f"[{p}]@{o}" for p, o in d.offsets)
    if d.how == "read":
        return f"{d.topic}{where} {_kv(d.key, d.value)} read {d.count} times"
    return f"{d.topic} {_kv(d.key, d.value)} stored at {where} ({d.count} times, acknowledged {d.acked})"


def _reordered(r: Reordered) -> str:
    what = {"sent": "acknowledged after", "read": "read after", "key": "read after",
            "sequence": "has a sequence not above that of"}[r.how]
    after = f"[{r.after_partition}]@{r.after}" if r.after_partition >= 0 else f"@{r.after}"
    sent = ", which was sent later" if r.how == "key" else ""
    return f"{r.how}: {r.topic}[{r.partition}]@{r.offset} {_kv(r.key, r.value)} {what} {after}{sent}"


def _ahead(c: CommittedAhead) -> str:
    first = ", ".join(str(o) for o in c.unprocessed[:10]) + (", ..." if len(c.unprocessed) > 10 else "")
    group = f"group {c.group!r} " if c.group is not None else ""
    return (f"{group}{c.topic}[{c.partition}] committed {c.committed}, processed up to {c.processed_up_to}, "
            f"{len(c.unprocessed)} never processed: {first}")


def aborted_ranges(broker: MockBroker, topic: str, partition: int) -> list[tuple[int, int]]:
    """The offset ranges (first, last) of a partition's transactional batches that a read_committed
    consumer must not see: those an ABORT marker ended and those of transactions still open."""
    pending: dict[int, list[tuple[int, int]]] = defaultdict(list)
    out: list[tuple[int, int]] = []
    for b in broker.batches(topic, partition):
        if b.is_control:
            ranges = pending.pop(b.producer_id, [])
            if b.control_type == ControlType.ABORT:
                out += ranges
        elif b.is_transactional:
            pending[b.producer_id].append((b.base_offset, b.last_offset))
    out += [r for ranges in pending.values() for r in ranges]
    return sorted(out)


def check_delivery(acked: Iterable[Any] = (), read: Iterable[Any] = (), *, broker: MockBroker | None = None,
                   isolation: str = "read_committed", aborted: Mapping[TP, list[tuple[int, int]]] | None = None,
                   group: str | None = None, committed: Mapping[TP, int] | None = None,
                   processed: Iterable[Any] | None = None, distinct_values: bool = False,
                   only_acked: bool = False, limit: int = 10) -> DeliveryReport:
    """Judge `read` (in the order consumers read it) against `acked` (in the order the records were sent);
    the module docstring says what each defect means. With `broker`, aborted transactions come from its
    log (isolation="read_uncommitted" skips that check) and `group` names whose committed offsets to check."""
    acks = [Acked.of(a) for a in acked]
    reads = [Read.of(r) for r in read]
    report = DeliveryReport(acked=len(acks), read=len(reads), only_acked=only_acked, limit=limit)
    matched = _lost_and_matched(acks, reads, report)
    _duplicates(acks, reads, distinct_values, report)
    _reorders(acks, reads, matched, report)
    if isolation == "read_committed" and (broker is not None or aborted is not None):
        ranges = dict(aborted or {})
        for tp in sorted({(r.topic, r.partition) for r in reads} - set(ranges)):
            ranges[tp] = aborted_ranges(broker, *tp) if broker is not None else []
        report.aborted_read = [r for r in reads if _inside(r.offset, ranges.get((r.topic, r.partition), []))]
    if group is not None and committed is None:
        if broker is None:
            raise ValueError("group= needs broker= (or pass committed=)")
        committed = broker.committed(group)
    if committed:
        done = reads if processed is None else [Read.of(r) for r in processed]
        report.committed_ahead = _committed_ahead(group, committed, acks, done, broker, isolation, aborted)
    return report


def _inside(offset: int, ranges: list[tuple[int, int]]) -> bool:
    return any(first <= offset <= last for first, last in ranges)


def _lost_and_matched(acks: list[Acked], reads: list[Read], report: DeliveryReport) -> dict[int, Read]:
    """Fill report.lost and report.unacknowledged; the read that matched each ack, by the ack's index."""
    at: dict[tuple[str, int, int], Read] = {}
    by_content: dict[tuple[str, int, bytes | None, bytes | None], list[Read]] = defaultdict(list)
    for r in reads:
        if (r.topic, r.partition, r.offset) not in at:
            at[(r.topic, r.partition, r.offset)] = r
            by_content[(r.topic, r.partition, r.key, r.value)].append(r)
    matched: dict[int, Read] = {}
    used: set[tuple[str, int, int]] = set()
    for i, a in enumerate(acks):
        found: Read | None
        if a.offset >= 0:
            found = at.get((a.topic, a.partition, a.offset))
            if found is not None and (not a.has_content or (found.key, found.value) == (a.key, a.value)):
                matched[i] = found
        else:
            candidates = by_content.get((a.topic, a.partition, a.key, a.value), [])
            found = next((c for c in candidates if (c.topic, c.partition, c.offset) not in used), None)
            if found is not None:
                matched[i] = found
        if i in matched:
            used.add((matched[i].topic, matched[i].partition, matched[i].offset))
        else:
            report.lost.append(a)
    report.unacknowledged = [r for tpo, r in at.items() if tpo not in used]
    return matched


def _duplicates(acks: list[Acked], reads: list[Read], distinct_values: bool, report: DeliveryReport) -> None:
    times = Counter((r.topic, r.partition, r.offset) for r in reads)
    first: dict[tuple[str, int, int], Read] = {}
    for r in reads:
        first.setdefault((r.topic, r.partition, r.offset), r)
    for tpo, n in times.items():
        if n > 1:
            r = first[tpo]
            report.duplicated.append(Duplicate("read", r.topic, r.key, r.value, [(r.partition, r.offset)], n))
    sent = Counter((a.topic, a.key, a.value) for a in acks if a.has_content)
    stored: dict[Content, list[tuple[int, int]]] = defaultdict(list)
    for r in first.values():
        stored[(r.topic, r.key, r.value)].append((r.partition, r.offset))
    for (topic, key, value), where in stored.items():
        allowed = sent.get((topic, key, value), 0) or (1 if distinct_values else 0)
        if allowed and len(where) > allowed:
            report.duplicated.append(Duplicate("stored", topic, key, value, sorted(where), len(where),
                                               sent.get((topic, key, value), 0)))


def _reorders(acks: list[Acked], reads: list[Read], matched: dict[int, Read], report: DeliveryReport) -> None:
    # sent: per partition, the acks in send order have growing offsets
    highest: dict[TP, int] = {}
    for i, a in enumerate(acks):
        offset = a.offset if a.offset >= 0 else (matched[i].offset if i in matched else -1)
        if offset < 0:
            continue
        top = highest.get((a.topic, a.partition), -1)
        if offset <= top:
            report.reordered.append(Reordered("sent", a.topic, a.partition, offset, top, a.key, a.value))
        highest[(a.topic, a.partition)] = max(top, offset)
    # read: per partition, each new offset a consumer reads is above those it read before
    seen: set[tuple[str, int, int]] = set()
    highest = {}
    firsts: list[Read] = []
    for r in reads:
        tpo = (r.topic, r.partition, r.offset)
        if tpo in seen:
            continue
        seen.add(tpo)
        firsts.append(r)
        top = highest.get((r.topic, r.partition), -1)
        if r.offset < top:
            report.reordered.append(Reordered("read", r.topic, r.partition, r.offset, top, r.key, r.value))
        highest[(r.topic, r.partition)] = max(top, r.offset)
    # key: a key's records are read in the order they were acknowledged (across partitions too)
    ack_index = {(r.topic, r.partition, r.offset): i for i, r in matched.items()}
    last: dict[tuple[str, bytes], tuple[int, Read]] = {}
    for r in firsts:
        index = ack_index.get((r.topic, r.partition, r.offset))
        if r.key is None or index is None:
            continue
        before: tuple[int, Read] | None = last.get((r.topic, r.key))
        if before is not None and index < before[0] and before[1].partition != r.partition:
            report.reordered.append(Reordered("key", r.topic, r.partition, r.offset, before[1].offset, r.key,
                                              r.value, before[1].partition))
        if before is None or index > before[0]:
            last[(r.topic, r.key)] = (index, r)
    # sequence: in the log, one producer's sequences grow with the offsets (per epoch)
    by_producer: dict[tuple[str, int, int, int], list[Read]] = defaultdict(list)
    for r in firsts:
        if r.producer_id >= 0 and r.sequence >= 0:
            by_producer[(r.topic, r.partition, r.producer_id, r.producer_epoch)].append(r)
    for records in by_producer.values():
        records.sort(key=lambda r: r.offset)
        for prev, r in zip(records, records[1:], strict=False):
            if r.sequence <= prev.sequence:
                report.reordered.append(Reordered("sequence", r.topic, r.partition, r.offset, prev.offset,
                                                  r.key, r.value))


def _committed_ahead(group: str | None, committed: Mapping[TP, int], acks: list[Acked], done: list[Read],
                     broker: MockBroker | None, isolation: str,
                     aborted: Mapping[TP, list[tuple[int, int]]] | None) -> list[CommittedAhead]:
    processed: dict[TP, set[int]] = defaultdict(set)
    for r in done:
        processed[(r.topic, r.partition)].add(r.offset)
    out = []
    for (topic, partition), offset in sorted(committed.items()):
        mine = processed.get((topic, partition), set())
        known = {a.offset for a in acks if (a.topic, a.partition) == (topic, partition) and a.offset >= 0}
        if broker is not None:
            hidden = []
            if isolation == "read_committed":
                hidden = (aborted or {}).get((topic, partition)) or aborted_ranges(broker, topic, partition)
            known |= {r.offset for r in broker.records(topic, partition) if not _inside(r.offset, hidden)}
        top = max(mine, default=-1)
        if known or broker is not None:
            low = min(mine, default=-1)
            missing = sorted(o for o in known if low <= o < offset and o not in mine)
        else:  # nothing says which offsets hold records: everything between the processed and the committed
            missing = list(range(top + 1, offset))
        if missing:
            out.append(CommittedAhead(group, topic, partition, offset, top, missing))
    return out
