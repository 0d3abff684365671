#!/usr/bin/env python3
"""The broker's Python work per request, without sockets: frames handed to a Connection in process.

    .venv/bin/python benchmarks/bench_request.py [--requests 2000] [--repeat 7] [--partitions 1]

A Produce v10 request (acks=all, one batch of one 100-byte record per partition, as confluent-kafka sends
with linger.ms 0) goes through everything a request goes through in the broker after the socket: the frame
decoder, the header and body decode, the produce checks, the record walk, the append, the response encode,
the write to the transport (a stand-in that only counts). Printed: microseconds of this thread's CPU per
request, best and median of --repeat runs of --requests each. The round trip's other costs (the event
loop, epoll, send and recv in the kernel) are left out: `bench_broker.py --only latency` has the whole.

Measured, never asserted. On the project's 2-core machine, 2026-11-26: 66-72 us per request before the
compiled codecs and the leaner produce path, 52 us after.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import struct
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mockbroker.connection import Connection  # noqa: E402
from mockbroker.protocol.headers import RequestHeader, encode_request_header  # noqa: E402
from mockbroker.protocol.messages import encode_request  # noqa: E402
from mockbroker.protocol.records.builder import RecordInput, build_batch  # noqa: E402
from mockbroker.server import MockBroker  # noqa: E402

PRODUCE, VERSION = 0, 10


class CountingTransport(asyncio.Transport):
    """Takes the broker's answers and counts them."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, data: Any) -> None:
        self.writes += 1

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 1) if name == "peername" else default

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def close(self) -> None:
        pass

    def is_closing(self) -> bool:
        return False


def produce_frame(partitions: int) -> bytes:
    """A size-prefixed Produce v10 request: one single-record batch per partition of topic "bench"."""
    batch = build_batch([RecordInput(key=None, value=b"v" * 100, timestamp=0)])
    header = encode_request_header(RequestHeader(PRODUCE, VERSION, 1, "bench-request"))
    body = encode_request(PRODUCE, VERSION, {
        "transactional_id": None, "acks": -1, "timeout_ms": 30000,
        "topic_data": [{"name": "bench", "partition_data": [{"index": i, "records": batch}
                                                            for i in range(partitions)]}]})
    payload = header.getvalue() + body.getvalue()
    return struct.pack(">i", len(payload)) + payload


def run(broker: MockBroker, wire: bytes, requests: int, repeat: int) -> list[float]:
    """On the broker's loop: microseconds of thread CPU per request, one figure per repetition."""
    conn = Connection(broker, broker.cluster.listeners[0])
    transport = CountingTransport()
    conn.connection_made(transport)
    out = []
    for _ in range(repeat):
        t0 = time.thread_time_ns()
        for _ in range(requests):
            buf = conn.get_buffer(-1)
            buf[: len(wire)] = wire
            del buf
            conn.buffer_updated(len(wire))
        out.append((time.thread_time_ns() - t0) / requests / 1000)
    if transport.writes != requests * repeat:
        raise RuntimeError(f"{transport.writes} answers for {requests * repeat} requests")
    conn.connection_lost(None)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--partitions", type=int, default=1)
    args = parser.parse_args()
    wire = produce_frame(args.partitions)
    # No request is split in steps (mockbroker.max.request.step.ms): a busy machine must not send one here
    # down the asynchronous path, which this synchronous loop does not run.
    broker = MockBroker(port=0, config={"mockbroker.max.request.step.ms": 60_000})
    with broker.run_in_thread():
        broker.create_topic("bench", args.partitions)
        per_request = broker._call(run, broker, wire, args.requests, args.repeat)
    print(f"Produce v{VERSION}, acks=all, {args.partitions} partition(s) of one 100-byte record: "
          f"{min(per_request):.1f} us per request (best of {args.repeat}), median {statistics.median(per_request):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
