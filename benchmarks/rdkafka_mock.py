"""librdkafka's own mock cluster, started through ctypes, as the benchmark peer.

The librdkafka shared library bundled in the confluent-kafka wheel exports the mock cluster API
(rd_kafka_mock_cluster_new / _bootstraps / _destroy). A mock cluster needs an rd_kafka_t handle to
live in: we create a bare producer handle (rd_kafka_conf_new + rd_kafka_new(RD_KAFKA_PRODUCER)) that
never produces anything, and the cluster runs its brokers on its own C thread, listening on loopback.

    with RdkafkaMockCluster(brokers=1) as mock:
        mock.create_topic("t", partitions=1)
        Producer({"bootstrap.servers": mock.bootstrap_servers})

Run it alone to print the bootstrap string: `python benchmarks/rdkafka_mock.py`; with --serve it
prints "rdkafka mock listening on host:port" and keeps the cluster up until stdin closes or SIGTERM,
creating topics on request ("topic NAME PARTITIONS" on stdin); bench_broker.py uses that to measure
the peer's idle CPU and memory as a process of its own.

Create topics with create_topic() (rd_kafka_mock_topic_create): an AdminClient's CreateTopics never
completes against the mock, whose Metadata names no controller.
"""

from __future__ import annotations

import ctypes
import glob
import os
from types import TracebackType

RD_KAFKA_PRODUCER = 0
RD_KAFKA_CONF_OK = 0


def find_librdkafka() -> str:
    """Path of the librdkafka shared library that ships inside the confluent_kafka wheel."""
    import confluent_kafka

    site = os.path.dirname(os.path.dirname(confluent_kafka.__file__))
    patterns = [
        os.path.join(site, "confluent_kafka.libs", "librdkafka*.so*"),
        os.path.join(site, "confluent_kafka", ".dylibs", "librdkafka*.dylib"),
        os.path.join(os.path.dirname(confluent_kafka.__file__), "librdkafka*.so*"),
    ]
    for pattern in patterns:
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    raise FileNotFoundError("no librdkafka shared library found next to confluent_kafka")


def _load(path: str) -> ctypes.CDLL:
    lib = ctypes.CDLL(path)
    vp, cp, sz, i = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int
    lib.rd_kafka_conf_new.restype = vp
    lib.rd_kafka_conf_new.argtypes = []
    lib.rd_kafka_conf_set.restype = i
    lib.rd_kafka_conf_set.argtypes = [vp, cp, cp, cp, sz]
    lib.rd_kafka_new.restype = vp
    lib.rd_kafka_new.argtypes = [i, vp, cp, sz]
    lib.rd_kafka_destroy.restype = None
    lib.rd_kafka_destroy.argtypes = [vp]
    lib.rd_kafka_mock_cluster_new.restype = vp
    lib.rd_kafka_mock_cluster_new.argtypes = [vp, i]
    lib.rd_kafka_mock_cluster_bootstraps.restype = cp
    lib.rd_kafka_mock_cluster_bootstraps.argtypes = [vp]
    lib.rd_kafka_mock_cluster_destroy.restype = None
    lib.rd_kafka_mock_cluster_destroy.argtypes = [vp]
    lib.rd_kafka_mock_topic_create.restype = i
    lib.rd_kafka_mock_topic_create.argtypes = [vp, cp, i, i]
    lib.rd_kafka_err2str.restype = cp
    lib.rd_kafka_err2str.argtypes = [i]
    lib.rd_kafka_version_str.restype = cp
    lib.rd_kafka_version_str.argtypes = []
    return lib


class RdkafkaMockCluster:
    """A librdkafka mock cluster of `brokers` brokers on 127.0.0.1, alive between start() and stop()."""

    def __init__(self, brokers: int = 1, library: str | None = None) -> None:
        self.brokers = brokers
        self.lib_path = library or find_librdkafka()
        self._lib = _load(self.lib_path)
        self._rk: int | None = None
        self._mcluster: int | None = None
        self.bootstrap_servers = ""

    @property
    def version(self) -> str:
        return self._lib.rd_kafka_version_str().decode()

    def start(self) -> RdkafkaMockCluster:
        lib = self._lib
        errstr = ctypes.create_string_buffer(512)
        conf = lib.rd_kafka_conf_new()
        # The handle only hosts the cluster; keep it quiet and never let it connect anywhere.
        for key, value in (("log_level", "3"), ("client.id", "rdkafka-mock-host")):
            if lib.rd_kafka_conf_set(conf, key.encode(), value.encode(), errstr, len(errstr)) != RD_KAFKA_CONF_OK:
                raise RuntimeError(f"rd_kafka_conf_set({key}): {errstr.value.decode()}")
        rk = lib.rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, len(errstr))  # takes ownership of conf
        if not rk:
            raise RuntimeError(f"rd_kafka_new: {errstr.value.decode()}")
        self._rk = rk
        mcluster = lib.rd_kafka_mock_cluster_new(rk, self.brokers)
        if not mcluster:
            lib.rd_kafka_destroy(rk)
            self._rk = None
            raise RuntimeError("rd_kafka_mock_cluster_new failed")
        self._mcluster = mcluster
        self.bootstrap_servers = lib.rd_kafka_mock_cluster_bootstraps(mcluster).decode()
        return self

    def create_topic(self, name: str, partitions: int = 1, replication_factor: int = 1) -> None:
        assert self._mcluster is not None, "not started"
        err = self._lib.rd_kafka_mock_topic_create(self._mcluster, name.encode(), partitions, replication_factor)
        if err != 0:
            raise RuntimeError(f"rd_kafka_mock_topic_create({name}): {self._lib.rd_kafka_err2str(err).decode()}")

    def stop(self) -> None:
        if self._mcluster is not None:
            self._lib.rd_kafka_mock_cluster_destroy(self._mcluster)
            self._mcluster = None
        if self._rk is not None:
            self._lib.rd_kafka_destroy(self._rk)
            self._rk = None

    def __enter__(self) -> RdkafkaMockCluster:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def _serve(brokers: int) -> int:
    """Keep a cluster up until SIGTERM/SIGINT or stdin reaching EOF (the parent went away).

    Commands on stdin, one per line: "topic NAME PARTITIONS" creates a topic and answers "ok" (or
    "error ...") on stdout. (The mock's CreateTopics cannot be reached through an AdminClient: its
    Metadata names no controller, so the admin request waits for one until it times out.)
    """
    import signal
    import sys
    import threading

    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())

    with RdkafkaMockCluster(brokers) as m:

        def commands() -> None:
            try:
                for line in sys.stdin:
                    parts = line.split()
                    if len(parts) == 3 and parts[0] == "topic":
                        try:
                            m.create_topic(parts[1], int(parts[2]))
                            print("ok", flush=True)
                        except (RuntimeError, ValueError) as exc:
                            print(f"error {exc}", flush=True)
                    elif parts:
                        print(f"error unknown command {line.strip()!r}", flush=True)
            except (OSError, ValueError):
                pass
            stop.set()

        print(f"rdkafka mock listening on {m.bootstrap_servers}", flush=True)
        threading.Thread(target=commands, daemon=True).start()
        while not stop.wait(1.0):
            pass
    return 0


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description="librdkafka's mock cluster through ctypes")
    ap.add_argument("--brokers", type=int, default=1)
    ap.add_argument("--serve", action="store_true", help="keep the cluster up until SIGTERM or stdin EOF")
    a = ap.parse_args()
    if a.serve:
        raise SystemExit(_serve(a.brokers))
    with RdkafkaMockCluster(a.brokers) as m:
        print(f"librdkafka {m.version} ({m.lib_path})")
        print(f"mock cluster bootstrap: {m.bootstrap_servers}")
