"""Throughput of protocol.records: what the broker does per produced batch, and the slower paths.

Run: python benchmarks/bench_records.py [--mib 64] [--repeat 3] [--cpu]
(MOCKBROKER_PURE_PYTHON=1 measures the Python record walker instead of the C one; --cpu times CPU time of
this process instead of wall time, for a busy machine.)

Measures, on 1 MiB batches of 1 KiB records (uncompressed unless said otherwise):
- header parse: RecordBatch(view) + all 13 header fields (what produce needs before validating)
- validate + header parse: the above plus the CRC-32C and the field checks
- validate + walk records: the above plus check_records over every record (the produce hot path since
  Produce validates every record, issue #20), also on 1 MiB batches of 100 B records
- iter_batches: splitting a blob of concatenated batches into views
- in-place edits: set_base_offset + set_partition_leader_epoch (offset assignment)
- build: build_batch, per codec (records/s and MB/s of record payload)
- iterate: records() per codec (decompress + decode), next to kafka-python's reader as a peer
- decompress + walk: what Produce does with a compressed batch, per codec

Not a test: prints numbers, asserts nothing. Best of `--repeat` runs (default 5).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from mockbroker.protocol.records.batch import RECORD_BATCH_OVERHEAD, Codec, RecordBatch, iter_batches  # noqa: E402
from mockbroker.protocol.records.builder import RecordInput, build_batch  # noqa: E402
from mockbroker.protocol.records.record import WALKER, check_records  # noqa: E402

RECORD_SIZE = 1024
SMALL_RECORD_SIZE = 100
BATCH_BYTES = 1 << 20
MIB = 1 << 20


CLOCK = time.perf_counter  # time.process_time with --cpu


def best_of(repeat: int, func: Callable[[], object]) -> float:
    """Fastest time of `repeat` runs, in seconds (wall time, or CPU time with --cpu)."""
    best = float("inf")
    for _ in range(repeat):
        start = CLOCK()
        func()
        best = min(best, CLOCK() - start)
    return best


def sample_records(count: int, size: int = RECORD_SIZE) -> list[RecordInput]:
    # Half random (incompressible), half repetitive, so the codecs have some work to do.
    return [
        RecordInput(
            key=f"key-{i:08d}".encode(),
            value=os.urandom(size // 2) + (b"%08d" % i) * (size // 16),
            timestamp=1_700_000_000_000 + i,
        )
        for i in range(count)
    ]


def walk(batch: RecordBatch) -> None:
    """What Produce does with a batch's records: decompress (an uncompressed batch is walked in place, as
    validation._records_section does), then the structural walk (no Record built)."""
    section = batch.buffer[RECORD_BATCH_OVERHEAD:] if batch.codec == Codec.NONE else batch.records_section()
    check_records(section, batch.record_count)


def report(name: str, seconds: float, megabytes: float | None = None, items: int | None = None) -> None:
    parts = [f"{name:<44}"]
    if megabytes is not None:
        parts.append(f"{megabytes / seconds:10.1f} MB/s")
    if items is not None:
        parts.append(f"{items / seconds:12,.0f} /s")
    parts.append(f"  ({seconds * 1000:.1f} ms)")
    print(" ".join(parts))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mib", type=int, default=64, help="MiB of batches for the header/validate runs")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cpu", action="store_true", help="CPU time of this process instead of wall time")
    args = parser.parse_args()
    global CLOCK
    if args.cpu:
        CLOCK = time.process_time

    per_batch = BATCH_BYTES // (RECORD_SIZE + 20)  # records per ~1 MiB batch
    records = sample_records(per_batch)
    one = build_batch(records, producer_id=1, producer_epoch=0, base_sequence=0)
    batches = [bytearray(one) for _ in range(args.mib)]
    total_mb = sum(len(b) for b in batches) / MIB
    print(
        f"python {sys.version.split()[0]}; {args.mib} batches of {len(one) / MIB:.2f} MiB, "
        f"{per_batch} records of ~{RECORD_SIZE} B each; record walker: {WALKER}; "
        f"{'CPU' if args.cpu else 'wall'} time\n"
    )

    def header_parse() -> None:
        for buf in batches:
            RecordBatch(buf).header()

    def validate() -> None:
        for buf in batches:
            batch = RecordBatch(buf)
            batch.header()
            batch.validate(producer_batch=True)

    blob = b"".join(batches)

    def split() -> None:
        for batch in iter_batches(blob):
            _ = batch.base_offset

    def assign() -> None:
        offset = 0
        for buf in batches:
            batch = RecordBatch(buf)
            batch.set_base_offset(offset)
            batch.set_partition_leader_epoch(3)
            offset += batch.last_offset_delta + 1

    report("header parse", best_of(args.repeat, header_parse), total_mb, len(batches))
    report(
        "validate (CRC-32C + checks) + header parse", best_of(args.repeat, validate), total_mb, len(batches)
    )

    def validate_and_walk(bufs: list[bytearray]) -> None:
        for buf in bufs:
            batch = RecordBatch(buf)
            batch.header()
            batch.validate(producer_batch=True)
            walk(batch)

    report("validate + walk records, 1 KiB records", best_of(args.repeat, lambda: validate_and_walk(batches)),
           total_mb, len(batches) * per_batch)
    small_per_batch = BATCH_BYTES // (SMALL_RECORD_SIZE + 10)
    small = build_batch(sample_records(small_per_batch, SMALL_RECORD_SIZE), producer_id=1, producer_epoch=0,
                        base_sequence=0)
    small_batches = [bytearray(small) for _ in range(max(args.mib // 4, 1))]
    small_mb = sum(len(b) for b in small_batches) / MIB

    def validate_small() -> None:
        for buf in small_batches:
            RecordBatch(buf).validate(producer_batch=True)

    report("validate (CRC-32C + checks), 100 B records", best_of(args.repeat, validate_small), small_mb,
           len(small_batches) * small_per_batch)
    report("validate + walk records, 100 B records", best_of(args.repeat, lambda: validate_and_walk(small_batches)),
           small_mb, len(small_batches) * small_per_batch)
    report("iter_batches over one blob", best_of(args.repeat, split), total_mb, len(batches))
    report("assign base offset + leader epoch in place", best_of(args.repeat, assign), total_mb, len(batches))
    print()

    payload_mb = sum(len(r.value or b"") + len(r.key or b"") for r in records) / MIB
    try:
        from kafka.record.default_records import DefaultRecordBatch as PeerBatch
    except ImportError:  # the peer is optional
        PeerBatch = None  # noqa: N806
    for codec in Codec:
        data = build_batch(records, codec=codec)
        report(
            f"build_batch {codec.name.lower():<6} ({len(data) / MIB:.2f} MiB out)",
            best_of(args.repeat, lambda c=codec: build_batch(records, codec=c)),  # type: ignore[misc]
            payload_mb,
            len(records),
        )
        report(
            f"records() {codec.name.lower()}",
            best_of(args.repeat, lambda d=data: RecordBatch(d).records()),  # type: ignore[misc]
            payload_mb,
            len(records),
        )
        report(
            f"decompress + walk {codec.name.lower()} (produce)",
            best_of(args.repeat, lambda d=data: walk(RecordBatch(d))),  # type: ignore[misc]
            payload_mb,
            len(records),
        )
        if PeerBatch is not None:
            report(
                f"  peer: kafka-python iterate {codec.name.lower()}",
                best_of(args.repeat, lambda d=bytes(data): list(PeerBatch(d))),  # type: ignore[misc]
                payload_mb,
                len(records),
            )


if __name__ == "__main__":
    main()
