"""The fault proxy in front of a secured cluster (mockbroker/remote/proxy_security.py): TLS to the cluster
(its CA, mutual TLS with the user's client certificate), TLS offered to the clients with mockbroker's
throwaway CA, and each client's SASL login (PLAIN, SCRAM) passed to the cluster; then the endpoint rewriting,
inject and received work as in plaintext. The cluster is a MockBroker(brokers=3) with SSL or SASL_SSL
listeners, reached only over the wire."""

from __future__ import annotations

import os
import socket
import ssl
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import confluent_kafka as ck
import pytest

from mockbroker import MockBroker
from mockbroker.errors import ErrorCode
from mockbroker.protocol.api_keys import ApiKey
from mockbroker.remote import KafkaProxy, RemoteBroker
from mockbroker.remote.proxy import parse_servers
from mockbroker.remote.proxy_security import proxy_security
from mockbroker.security.tls import CertificateAuthority, TlsConfig
from tests.remote.test_remote_proxy import aiokafka_round_trip

pytest_plugins = ["pytester"]
REPO = Path(__file__).resolve().parents[2]
QUIET = {"log_level": 3}
USER, PASSWORD = "alice", "secret"


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def sasl_ssl(cluster: MockBroker, mechanism: str) -> dict[str, str]:
    return {"security.protocol": "SASL_SSL", "ssl.ca.location": str(cluster.tls.ca_file),
            "sasl.mechanism": mechanism, "sasl.username": USER, "sasl.password": PASSWORD}


def produce_and_consume(config: dict[str, str], topic: str, count: int) -> list[bytes]:
    """Produce count records (idempotent, over 3 partitions) and read them back as a group, with config."""
    producer = ck.Producer({**config, "enable.idempotence": True, "linger.ms": 5, **QUIET})
    for i in range(count):
        producer.produce(topic, value=b"v%d" % i, partition=i % 3)
    assert producer.flush(60) == 0
    consumer = ck.Consumer({**config, "group.id": unique("g"), "auto.offset.reset": "earliest", **QUIET})
    got: list[bytes] = []
    deadline = time.monotonic() + 60
    try:
        consumer.subscribe([topic])
        while len(got) < count and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and not msg.error():
                got.append(msg.value() or b"")
    finally:
        consumer.close()
    return sorted(got)


def proxied_ports(proxy: KafkaProxy) -> set[int]:
    return {port for _, port in proxy.routes().values()}


def test_client_settings_point_at_the_proxy_in_the_settings_own_spelling(tmp_path: Path) -> None:
    cluster_ca = tmp_path / "cluster-ca.pem"
    cluster_ca.write_bytes(CertificateAuthority().cert_pem)
    java = proxy_security({"security.protocol": "SSL", "ssl.truststore.location": str(cluster_ca),
                           "ssl.truststore.type": "PEM", "ssl.endpoint.identification.algorithm": "https"})
    try:
        settings = java.client_settings({"security.protocol": "SSL", "ssl.truststore.location": str(cluster_ca),
                                         "ssl.truststore.type": "PEM", "client.id": "app"})
        assert settings == {"security.protocol": "SSL", "ssl.truststore.location": java.ca_file,
                            "ssl.truststore.type": "PEM", "client.id": "app"}
        assert java.listener == "SSL" and java.ca_file is not None
        with open(java.ca_file, encoding="ascii") as f:
            assert java.client_settings({"ssl.ca.pem": "cluster's"})["ssl.ca.pem"] == f.read()
    finally:
        java.close()
    plain_side = proxy_security({"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER",
                                 "ssl.ca.location": "", "enable.ssl.certificate.verification": "false"}, tls=False)
    assert plain_side.listener == "SASL_PLAINTEXT" and plain_side.ca_file is None
    assert plain_side.upstream.context is not None and plain_side.upstream.mechanism is None  # no login of its own
    assert plain_side.client_settings({"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER",
                                       "ssl.ca.location": "x"}) == {"security.protocol": "SASL_PLAINTEXT",
                                                                    "sasl.mechanism": "OAUTHBEARER"}
    with pytest.raises(ValueError, match="ssl.keystore.location"):
        proxy_security({"security.protocol": "SASL_SSL", "ssl.keystore.location": "k.jks"})
    offered = proxy_security({}, tls=True)
    try:
        assert offered.listener == "SSL" and offered.client_settings({}) == {
            "security.protocol": "SSL", "ssl.ca.location": offered.ca_file}
    finally:
        offered.close()
    assert proxy_security({}).tls is None and proxy_security({}).client_settings({}) == {}


def test_an_ssl_cluster_through_the_proxy_under_faults(mockbroker_factory: Callable[..., MockBroker]) -> None:
    cluster = mockbroker_factory(brokers=3, security="SSL")
    settings = {"security.protocol": "SSL", "ssl.ca.location": str(cluster.tls.ca_file)}
    with RemoteBroker(cluster.bootstrap_servers, config=settings, proxy=True) as remote:
        assert remote.proxy is not None
        config = remote.client_config
        assert config["ssl.ca.location"] == remote.proxy.ca_file != settings["ssl.ca.location"]
        topic = unique("ssl")
        remote.create_topic(topic, 3)
        remote.inject(ApiKey.PRODUCE, error=ErrorCode.NOT_LEADER_OR_FOLLOWER, topic=topic)  # type: ignore[attr-defined]
        remote.inject(ApiKey.FETCH, drop="before", topic=topic)  # type: ignore[attr-defined]
        assert produce_and_consume(config, topic, 6) == [b"v%d" % i for i in range(6)]
        assert remote.proxy.faults.rules == []  # both fired
        brokers = ck.Producer({**config, **QUIET}).list_topics(timeout=30).brokers
        assert {b.port for b in brokers.values()} <= proxied_ports(remote.proxy)  # the rewritten endpoints
        assert {r.listener for r in remote.received()} == {"SSL"}  # type: ignore[attr-defined]
    real = {port for _, port in parse_servers(cluster.bootstrap_servers)}
    assert len(brokers) == 3 and real.isdisjoint(b.port for b in brokers.values())
    assert {r.listener for r in cluster.received(ApiKey.PRODUCE)} == {"SSL"}


def test_a_client_must_trust_the_proxys_ca(mockbroker_factory: Callable[..., MockBroker]) -> None:
    cluster = mockbroker_factory(security="SSL")
    settings = {"security.protocol": "SSL", "ssl.ca.location": str(cluster.tls.ca_file)}
    with KafkaProxy(cluster.bootstrap_servers, config=settings) as proxy:
        address = parse_servers(proxy.bootstrap_servers)[0]
        untrusting = ssl.create_default_context(cafile=str(cluster.tls.ca_file))  # the cluster's CA only
        with pytest.raises(ssl.SSLCertVerificationError), socket.create_connection(address, timeout=30) as sock:
            untrusting.wrap_socket(sock, server_hostname=address[0])
        assert proxy.ca_file is not None
        trusting = ssl.create_default_context(cafile=proxy.ca_file)  # the host name 127.0.0.1 checks, too
        with socket.create_connection(address, timeout=30) as sock, \
                trusting.wrap_socket(sock, server_hostname=address[0]) as tls:
            assert tls.version() in ("TLSv1.2", "TLSv1.3")


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_sasl_ssl_logins_pass_through_and_faults_still_apply(mechanism: str,
                                                            mockbroker_factory: Callable[..., MockBroker]) -> None:
    cluster = mockbroker_factory(brokers=3, security="SASL_SSL", users={USER: PASSWORD})
    with RemoteBroker(cluster.bootstrap_servers, config=sasl_ssl(cluster, mechanism), proxy=True) as remote:
        assert remote.proxy is not None
        topic = unique("sasl")
        remote.create_topic(topic, 3)
        remote.inject(ApiKey.PRODUCE, error=ErrorCode.NOT_LEADER_OR_FOLLOWER, topic=topic, count=2)  # type: ignore[attr-defined]
        remote.inject(ApiKey.FIND_COORDINATOR, error=ErrorCode.COORDINATOR_NOT_AVAILABLE)  # type: ignore[attr-defined]
        config = remote.client_config
        assert config["sasl.password"] == PASSWORD and config["security.protocol"] == "SASL_SSL"
        assert produce_and_consume(config, topic, 6) == [b"v%d" % i for i in range(6)]
        assert remote.proxy.faults.rules == []
        seen = remote.received()  # type: ignore[attr-defined]
        assert {ApiKey.SASL_HANDSHAKE, ApiKey.SASL_AUTHENTICATE} <= {r.api_key for r in seen}
        assert {r.principal for r in seen if r.api_key == ApiKey.PRODUCE} == {f"User:{USER}"}
        assert {r.listener for r in seen} == {"SASL_SSL"}
        produced = len([r for r in seen if r.api_key == ApiKey.PRODUCE])
        assert produced - len(cluster.received(ApiKey.PRODUCE)) == 2  # answered by the proxy, then retried
        assert {r.principal for r in cluster.received(ApiKey.PRODUCE)} == {f"User:{USER}"}  # the client's login


def test_a_wrong_password_is_refused_by_the_cluster_through_the_proxy(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    cluster = mockbroker_factory(security="SASL_SSL", users={USER: PASSWORD}, sasl_mechanisms=["SCRAM-SHA-256"])
    with KafkaProxy(cluster.bootstrap_servers, config=sasl_ssl(cluster, "SCRAM-SHA-256")) as proxy:
        cluster.create_topic("guarded")
        wrong = ck.Producer({**proxy.client_settings(), "sasl.password": "wrong", "message.timeout.ms": 3000,
                             "log_level": 0})
        failed: list[object] = []
        wrong.produce("guarded", value=b"no", on_delivery=lambda err, msg: failed.append(err))
        assert wrong.flush(30) == 0 and len(failed) == 1 and failed[0] is not None
        assert cluster.records("guarded") == []
        assert ApiKey.SASL_AUTHENTICATE in {r.api_key for r in proxy.received()}
        assert ApiKey.PRODUCE not in {r.api_key for r in proxy.received()}


def test_mutual_tls_to_the_cluster_with_the_users_certificate(mockbroker_factory: Callable[..., MockBroker]) -> None:
    cluster = mockbroker_factory(brokers=3, security="SSL", tls=TlsConfig(client_auth="required"))
    cert = cluster.tls.client_cert("app", organization="Acme")
    settings = {"security.protocol": "SSL", "ssl.ca.location": str(cluster.tls.ca_file),
                "ssl.certificate.location": cert.cert_file, "ssl.key.location": cert.key_file}
    with RemoteBroker(cluster.bootstrap_servers, config=settings, proxy=True) as remote:
        topic = unique("mtls")
        remote.create_topic(topic, 3)
        remote.inject(ApiKey.PRODUCE, error=ErrorCode.NOT_LEADER_OR_FOLLOWER, topic=topic)  # type: ignore[attr-defined]
        assert produce_and_consume(remote.client_config, topic, 3) == [b"v0", b"v1", b"v2"]
    assert {r.principal for r in cluster.received(ApiKey.PRODUCE)} == {cert.principal}


def test_plaintext_clients_through_a_proxy_that_speaks_tls_to_the_cluster(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    cluster = mockbroker_factory(brokers=3, security="SASL_SSL", users={USER: PASSWORD})
    with KafkaProxy(cluster.bootstrap_servers, config=sasl_ssl(cluster, "SCRAM-SHA-512"), tls=False) as proxy:
        config = proxy.client_settings()
        assert config["security.protocol"] == "SASL_PLAINTEXT" and not [k for k in config if k.startswith("ssl.")]
        cluster.create_topic("plain-side", 3)
        proxy.inject(ApiKey.PRODUCE, error=ErrorCode.NOT_LEADER_OR_FOLLOWER)
        assert produce_and_consume(config, "plain-side", 3) == [b"v0", b"v1", b"v2"]
        assert {r.listener for r in proxy.received()} == {"SASL_PLAINTEXT"}
    assert {r.listener for r in cluster.received(ApiKey.PRODUCE)} == {"SASL_SSL"}


def test_aiokafka_sasl_ssl_scram_through_the_proxy(mockbroker_factory: Callable[..., MockBroker]) -> None:
    from aiokafka.helpers import create_ssl_context

    cluster = mockbroker_factory(brokers=3, security="SASL_SSL", users={USER: PASSWORD})
    with RemoteBroker(cluster.bootstrap_servers, config=sasl_ssl(cluster, "SCRAM-SHA-256"), proxy=True) as remote:
        assert remote.proxy is not None and remote.proxy.ca_file is not None
        topic = unique("aio")
        remote.create_topic(topic, 3)
        remote.inject(ApiKey.PRODUCE, error=ErrorCode.NOT_LEADER_OR_FOLLOWER, topic=topic)  # type: ignore[attr-defined]
        remote.inject(ApiKey.FETCH, drop="before", topic=topic)  # type: ignore[attr-defined]
        login = {"bootstrap_servers": remote.bootstrap_servers, "security_protocol": "SASL_SSL",
                 "sasl_mechanism": "SCRAM-SHA-256", "sasl_plain_username": USER, "sasl_plain_password": PASSWORD}

        context = create_ssl_context(cafile=remote.proxy.ca_file)
        got = aiokafka_round_trip(topic, **login, ssl_context=context)
        assert sorted(got) == sorted(b"a%d" % i for i in range(5))
        assert remote.proxy.faults.rules == []
        assert {r.principal for r in remote.received(ApiKey.PRODUCE)} == {f"User:{USER}"}  # type: ignore[attr-defined]
    assert {r.principal for r in cluster.received(ApiKey.PRODUCE)} == {f"User:{USER}"}


@pytest.mark.interop
@pytest.mark.java
def test_the_java_client_sasl_ssl_through_the_proxy(mockbroker_factory: Callable[..., MockBroker]) -> None:
    from tests.interop.clients import of_type, require_java, run_java

    require_java()
    cluster = mockbroker_factory(brokers=3, security="SASL_SSL", users={USER: PASSWORD})
    jaas = (f'org.apache.kafka.common.security.scram.ScramLoginModule required username="{USER}" '
            f'password="{PASSWORD}";')
    java_names = {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": jaas,
                  "ssl.truststore.location": str(cluster.tls.ca_file), "ssl.truststore.type": "PEM"}
    with RemoteBroker(cluster.bootstrap_servers, config=java_names, proxy=True) as remote:
        assert remote.proxy is not None
        config = {k: v for k, v in remote.client_config.items() if k != "bootstrap.servers"}
        assert config["ssl.truststore.location"] == remote.proxy.ca_file  # the proxy's CA, Java's spelling
        topic = unique("java")
        remote.create_topic(topic, 3)
        remote.inject(ApiKey.PRODUCE, error=ErrorCode.NOT_LEADER_OR_FOLLOWER, topic=topic)  # type: ignore[attr-defined]
        remote.inject(ApiKey.FETCH, drop="before", topic=topic)  # type: ignore[attr-defined]
        records = [{"partition": i % 3, "key": f"k{i}", "value": f"v{i}", "headers": []} for i in range(6)]
        lines = run_java("produce", {"bootstrap": remote.bootstrap_servers, "topic": topic, "records": records,
                                     "config": {**config, "enable.idempotence": "true", "retry.backoff.ms": 50},
                                     "timeout_ms": 30_000})
        assert of_type(lines, "done") == [{"type": "done", "sent": 6, "failed": 0}], lines
        lines = run_java("consume", {"bootstrap": remote.bootstrap_servers, "topic": topic, "seek": "beginning",
                                     "until_end": True, "config": config, "timeout_ms": 30_000})
        assert sorted(r["value"] for r in of_type(lines, "record")) == [f"v{i}" for i in range(6)], lines
        assert remote.proxy.faults.rules == []
        assert {r.principal for r in remote.received(ApiKey.PRODUCE)} == {f"User:{USER}"}  # type: ignore[attr-defined]
    assert {r.principal for r in cluster.received(ApiKey.PRODUCE)} == {f"User:{USER}"}


SUITE = '''
import confluent_kafka
from mockbroker.protocol.api_keys import ApiKey


def test_faults_on_the_secured_cluster_through_the_proxy(mockbroker):
    assert mockbroker.proxy is not None
    config = mockbroker.client_config
    assert config["ssl.ca.location"] == mockbroker.proxy.ca_file and config["sasl.mechanism"] == "SCRAM-SHA-256"
    mockbroker.create_topic("orders")
    mockbroker.inject(ApiKey.PRODUCE, error=6)
    producer = confluent_kafka.Producer({**config, "log_level": 3})
    producer.produce(mockbroker.topic("orders"), value=b"secured")
    assert producer.flush(30) == 0
    mockbroker.wait_for_records("orders", 1, timeout=30)
    assert [r.listener for r in mockbroker.received(ApiKey.PRODUCE)] == ["SASL_SSL"] * 2
'''


def test_kafka_proxy_option_on_a_secured_cluster(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                                                 mockbroker_factory: Callable[..., MockBroker]) -> None:
    monkeypatch.setenv("PYTHONPATH", str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for name in ("MOCKBROKER_KAFKA_PROXY", "MOCKBROKER_KAFKA_CONFIG_FILE"):
        monkeypatch.delenv(name, raising=False)
    cluster = mockbroker_factory(brokers=3, security="SASL_SSL", users={USER: PASSWORD})
    pytester.makepyfile(SUITE)
    options = [f"{k}={v}" for k, v in sasl_ssl(cluster, "SCRAM-SHA-256").items()]
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--kafka-bootstrap", cluster.bootstrap_servers,
                                           "--kafka-proxy", *[a for o in options for a in ("--kafka-config", o)])
    result.assert_outcomes(passed=1)
    assert {r.principal for r in cluster.received(ApiKey.PRODUCE)} == {f"User:{USER}"}
