#!/usr/bin/env python3
"""Encode/decode rates of Produce and Fetch messages with the protocol package (no sockets).

    .venv/bin/python benchmarks/bench_protocol.py [--seconds 1.0]

Messages are shaped like real traffic: a Produce request with one 16 KiB batch per partition
(1, 10 and 100 partitions), and a Fetch response returning one 1 MiB batch per partition as stored
views (the broker's hot path: records handed over as chunks, not copied). Rates are messages/s and the
record bytes they carry per second. Measured, never asserted.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mockbroker.protocol.messages import decode_request, decode_response, encode_request, encode_response  # noqa: E402
from mockbroker.protocol.records.builder import build_batch  # noqa: E402


def rate(fn: Callable[[], object], seconds: float) -> float:
    n = 0
    deadline = time.perf_counter() + seconds
    start = time.perf_counter()
    while True:
        fn()
        n += 1
        if n % 16 == 0 and time.perf_counter() >= deadline:
            break
    return n / (time.perf_counter() - start)


def produce_request(partitions: int, batch: bytes) -> dict[str, object]:
    return {"transactional_id": None, "acks": -1, "timeout_ms": 30000,
            "topic_data": [{"name": "bench", "partition_data": [{"index": i, "records": batch}
                                                                 for i in range(partitions)]}]}


def fetch_response(partitions: int, batch: memoryview) -> dict[str, object]:
    return {"throttle_time_ms": 0, "error_code": 0, "session_id": 7, "responses": [
        {"topic": "bench", "partitions": [
            {"partition_index": i, "error_code": 0, "high_watermark": 1000, "last_stable_offset": 1000,
             "log_start_offset": 0, "aborted_transactions": None, "preferred_read_replica": -1,
             "records": [batch]} for i in range(partitions)]}]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=1.0, help="time per measurement")
    args = parser.parse_args()
    small = bytes(build_batch([(b"k%d" % i, b"v" * 100) for i in range(140)]))  # ~16 KiB
    big = memoryview(bytes(build_batch([(b"k%d" % i, b"v" * 1000) for i in range(1000)])))  # ~1 MiB
    print(f"{'message':<42}{'version':>8}{'msgs/s':>12}{'MB/s':>10}")
    for partitions in (1, 10, 100):
        for version in (9, 13):
            req = produce_request(partitions, small)
            wire = encode_request(0, version, req).getvalue()
            carried = partitions * len(small) / 1e6
            r = rate(lambda req=req, version=version: encode_request(0, version, req), args.seconds)
            print(f"{f'Produce request encode, {partitions} partitions':<42}{version:>8}{r:>12.0f}{r * carried:>10.0f}")
            r = rate(lambda wire=wire, version=version: decode_request(0, version, wire), args.seconds)
            print(f"{f'Produce request decode, {partitions} partitions':<42}{version:>8}{r:>12.0f}{r * carried:>10.0f}")
    for partitions in (1, 10, 100):
        version = 16
        resp = fetch_response(partitions, big)
        carried = partitions * len(big) / 1e6
        r = rate(lambda resp=resp, version=version: encode_response(1, version, resp).chunks(), args.seconds)
        print(f"{f'Fetch response encode (views), {partitions} p.':<42}{version:>8}{r:>12.0f}{r * carried:>10.0f}")
        wire = encode_response(1, version, resp).getvalue()
        r = rate(lambda wire=wire, version=version: decode_response(1, version, wire), args.seconds)
        print(f"{f'Fetch response decode, {partitions} partitions':<42}{version:>8}{r:>12.0f}{r * carried:>10.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
