"""The remote target on a secured cluster (mockbroker/remote/security.py): settings in librdkafka's and Java's
property names, TLS (server and mutual), SASL PLAIN and SCRAM-SHA-256/512, against a MockBroker(brokers=3)
with secured listeners reached only over the wire; the principal the cluster saw proves the login. And the
pytest options: --kafka-config over --kafka-config-file, the fixture's client_config for the test's clients."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import confluent_kafka as ck
import pytest

from mockbroker import MockBroker
from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.remote import RemoteBroker
from mockbroker.remote.security import client_security, parse_setting, read_properties
from mockbroker.security.tls import TlsConfig
from tests.remote.test_remote_target import QUIET

pytest_plugins = ["pytester"]
REPO = Path(__file__).resolve().parents[2]
USER, PASSWORD = "alice", "secret"
JAAS = ('org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" '
        'password="secret";')


def principals(cluster: MockBroker) -> set[str]:
    """Who the cluster saw sending the remote target's requests (its client id), ApiVersions and SASL left out."""
    return {r.principal for r in cluster.received() if r.client_id == "mockbroker-remote"
            and r.api_key not in (17, 18, 36)}


def test_settings_in_both_clients_names() -> None:
    librdkafka = client_security({"security.protocol": "sasl_plaintext", "sasl.mechanisms": "SCRAM-SHA-512",
                                  "sasl.username": "u", "sasl.password": "p", "client.id": "ignored"})
    assert (librdkafka.protocol, librdkafka.mechanism, librdkafka.username, librdkafka.password,
            librdkafka.context) == ("SASL_PLAINTEXT", "SCRAM-SHA-512", "u", "p", None)
    java = client_security({"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-256",
                            "sasl.jaas.config": JAAS, "ssl.endpoint.identification.algorithm": ""})
    assert (java.mechanism, java.username, java.password) == ("SCRAM-SHA-256", "alice", "secret")
    assert java.context is not None and java.context.check_hostname is False
    assert client_security({}).protocol == "PLAINTEXT" and client_security({}).context is None
    assert client_security({"security.protocol": "SSL"}).context.check_hostname is True  # type: ignore[union-attr]


@pytest.mark.parametrize("settings,message", [
    ({"security.protocol": "TLS"}, "security.protocol 'TLS'"),
    ({"security.protocol": "SASL_SSL", "sasl.username": "u", "sasl.password": "p"}, "sasl.mechanism GSSAPI"),
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER"}, "sasl.mechanism OAUTHBEARER"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"}, "needs sasl.username and sasl.password"),
    ({"ssl.keystore.location": "k.jks", "sasl.kerberos.service.name": "kafka"},
     "not supported by the remote target: sasl.kerberos.service.name, ssl.keystore.location"),
    ({"security.protocol": "SSL", "ssl.truststore.location": "t.jks", "ssl.truststore.type": "JKS"},
     "ssl.truststore.type JKS"),
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.jaas.config": "Oops required;"},
     "no PlainLoginModule or ScramLoginModule"),
    ({"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.jaas.config": "x required a=\"b"},
     "sasl.jaas.config"),
])
def test_a_bad_setting_is_refused_naming_it(settings: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        client_security(settings)


def test_a_properties_file_and_key_value_options(tmp_path: Path) -> None:
    path = tmp_path / "client.properties"
    path.write_text(f"# the CI's cluster\n! another comment\nsecurity.protocol = SASL_SSL\n"
                    f"sasl.mechanism: PLAIN\nsasl.jaas.config={JAAS}\n\n")
    assert read_properties(str(path)) == {"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
                                          "sasl.jaas.config": JAAS}
    path.write_text("just words\n")
    with pytest.raises(ValueError, match="client.properties:1: not key=value"):
        read_properties(str(path))
    assert parse_setting("sasl.password=a=b") == ("sasl.password", "a=b")
    with pytest.raises(ValueError, match="give KEY=VALUE"):
        parse_setting("sasl.password")


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_sasl_ssl_with_each_mechanism(mechanism: str, mockbroker_factory: Callable[..., MockBroker]) -> None:
    cluster = mockbroker_factory(brokers=3, security="SASL_SSL", users={USER: PASSWORD})
    settings = {"security.protocol": "SASL_SSL", "ssl.ca.location": str(cluster.tls.ca_file),
                "sasl.mechanism": mechanism, "sasl.username": USER, "sasl.password": PASSWORD}
    with RemoteBroker(cluster.bootstrap_servers, config=settings, prefix="mb-sec-") as remote:
        remote.create_topic("orders", 3)
        producer = ck.Producer({**remote.client_config, "enable.idempotence": True, **QUIET})
        for i in range(3):
            producer.produce(remote.topic("orders"), value=b"v%d" % i, partition=i)
        assert producer.flush(30) == 0
        remote.wait_for_records("orders", 3, timeout=30)
        assert sorted(r.value for r in remote.records("orders")) == [b"v0", b"v1", b"v2"]
        assert remote.cleanup() == []
    assert principals(cluster) == {f"User:{USER}"}
    assert {r.listener for r in cluster.received() if r.client_id == "mockbroker-remote"} == {"SASL_SSL"}


def test_sasl_plaintext_with_java_jaas_config(mockbroker_factory: Callable[..., MockBroker]) -> None:
    cluster = mockbroker_factory(security="SASL_PLAINTEXT", users={USER: PASSWORD}, sasl_mechanisms=["SCRAM-SHA-512"])
    settings = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": JAAS}
    with RemoteBroker(cluster.bootstrap_servers, config=settings) as remote:
        remote.create_topic("java-names")
        assert "java-names" in remote.topics()
    assert principals(cluster) == {f"User:{USER}"}


def test_mutual_tls_with_a_client_certificate(mockbroker_factory: Callable[..., MockBroker]) -> None:
    cluster = mockbroker_factory(security="SSL", tls=TlsConfig(client_auth="required"))
    cert = cluster.tls.client_cert("remote-target", organization="Acme")
    settings = {"security.protocol": "SSL", "ssl.ca.location": str(cluster.tls.ca_file),
                "ssl.certificate.location": cert.cert_file, "ssl.key.location": cert.key_file}
    with RemoteBroker(cluster.bootstrap_servers, config=settings) as remote:
        remote.create_topic("mtls")
        assert remote.offsets("mtls")["high_watermark"] == 0
    assert principals(cluster) == {cert.principal}


def test_a_refused_login_or_an_untrusted_certificate_says_so(mockbroker_factory: Callable[..., MockBroker]) -> None:
    cluster = mockbroker_factory(security="SASL_SSL", users={USER: PASSWORD}, sasl_mechanisms=["SCRAM-SHA-256"])
    good = {"security.protocol": "SASL_SSL", "ssl.ca.location": str(cluster.tls.ca_file),
            "sasl.mechanism": "SCRAM-SHA-256", "sasl.username": USER, "sasl.password": PASSWORD}
    with pytest.raises(KafkaError, match="refused the SCRAM-SHA-256 login of 'alice'") as refused:
        RemoteBroker(cluster.bootstrap_servers, config={**good, "sasl.password": "wrong"})
    assert refused.value.code == ErrorCode.SASL_AUTHENTICATION_FAILED
    with pytest.raises(KafkaError, match=r"does not serve SASL mechanism PLAIN \(serves SCRAM-SHA-256"):
        RemoteBroker(cluster.bootstrap_servers, config={**good, "sasl.mechanism": "PLAIN"})
    with pytest.raises(ConnectionError, match="CERTIFICATE_VERIFY_FAILED"):
        RemoteBroker(cluster.bootstrap_servers, config={k: v for k, v in good.items() if k != "ssl.ca.location"})
    with RemoteBroker(cluster.bootstrap_servers, config={**good, "ssl.ca.location": "",
                                                         "enable.ssl.certificate.verification": "false"}) as remote:
        assert remote.topics() == []  # trusting any certificate, as librdkafka's setting says


SUITE = '''
import confluent_kafka


def test_the_secured_cluster_through_the_fixture(mockbroker):
    mockbroker.create_topic("orders")
    config = mockbroker.client_config
    assert config["sasl.mechanism"] == "SCRAM-SHA-512" and config["sasl.password"] == "secret"
    producer = confluent_kafka.Producer({**config, "log_level": 3})
    producer.produce(mockbroker.topic("orders"), value=b"secured")
    assert producer.flush(30) == 0
    mockbroker.wait_for_records("orders", 1, timeout=30)
    assert [r.value for r in mockbroker.records("orders")] == [b"secured"]
'''


def test_pytest_options_take_a_properties_file_and_key_values(pytester: pytest.Pytester,
                                                              mockbroker_factory: Callable[..., MockBroker],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cluster = mockbroker_factory(brokers=3, security="SASL_SSL", users={USER: PASSWORD})
    properties = pytester.path / "client.properties"
    properties.write_text(f"security.protocol=SASL_SSL\nssl.ca.location={cluster.tls.ca_file}\n"
                          f"sasl.mechanism=PLAIN\nsasl.username={USER}\nsasl.password=wrong\n")
    pytester.makepyfile(SUITE)
    monkeypatch.setenv("MOCKBROKER_KAFKA_CONFIG_FILE", str(properties))
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--kafka-bootstrap", cluster.bootstrap_servers,
        "--kafka-config", "sasl.mechanism=SCRAM-SHA-512", "--kafka-config", f"sasl.password={PASSWORD}")
    result.assert_outcomes(passed=1)
    assert principals(cluster) == {f"User:{USER}"}
    assert not [t for t in cluster.topics() if t.endswith("orders")]  # isolated and deleted at teardown


def test_bad_settings_stop_the_run_before_any_test(pytester: pytest.Pytester,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.delenv("MOCKBROKER_KAFKA_CONFIG_FILE", raising=False)
    pytester.makepyfile("def test_never_runs(mockbroker):\n    raise AssertionError\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--kafka-bootstrap", "127.0.0.1:1",
                                           "--kafka-config", "security.protocol=SASL_SSL",
                                           "--kafka-config", "sasl.mechanism=GSSAPI")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*the Kafka cluster's settings*sasl.mechanism GSSAPI*"])
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--kafka-bootstrap", "127.0.0.1:1",
                                           "--kafka-config-file", str(pytester.path / "absent.properties"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*absent.properties*"])
