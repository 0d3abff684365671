"""TLS and SASL from Kafka's setting names (MockBroker(config=...) and the images' environment)."""

from __future__ import annotations

from mockbroker.security.settings import security_from_settings, tls_from_settings
from mockbroker.settings import make_settings
from mockbroker.state.cluster.cluster import Listener


def test_a_pem_keystore_is_the_certificate_chain_and_key_in_one_file() -> None:
    tls = tls_from_settings({"ssl.keystore.location": "/k/server.pem", "ssl.keystore.type": "PEM",
                             "ssl.key.password": "kp", "ssl.truststore.location": "/k/ca.pem",
                             "ssl.truststore.type": "pem", "ssl.client.auth": "REQUIRED"})
    assert (tls.certfile, tls.keyfile, tls.key_password, tls.keystore) == ("/k/server.pem", "/k/server.pem", "kp", None)
    assert (tls.cafile, tls.truststore, tls.client_auth) == ("/k/ca.pem", None, "required")


def test_pkcs12_is_the_default_store_type_and_empty_values_are_unset() -> None:
    tls = tls_from_settings({"ssl.keystore.location": "/k/server.p12", "ssl.keystore.password": "pw",
                             "ssl.truststore.location": "", "ssl.client.auth": ""})
    assert (tls.keystore, tls.keystore_password, tls.certfile) == ("/k/server.p12", "pw", None)
    assert (tls.truststore, tls.cafile, tls.client_auth) == (None, None, "none")


def test_protocols_mechanisms_and_limits_come_from_kafkas_setting_names() -> None:
    listeners = [Listener("INTERNAL", 1, "127.0.0.1", 0), Listener("EXTERNAL", 1, "127.0.0.1", 0)]
    security = security_from_settings(make_settings(listeners=listeners, config={
        "listener.security.protocol.map": "INTERNAL:PLAINTEXT,EXTERNAL:SASL_SSL",
        "sasl.enabled.mechanisms": "SCRAM-SHA-512, PLAIN", "sasl.server.max.receive.size": "1000",
        "connections.failed.authentication.delay.ms": "0"}))
    assert [lst.security_protocol for lst in listeners] == ["PLAINTEXT", "SASL_SSL"]
    assert security.mechanisms == ["SCRAM-SHA-512", "PLAIN"]
    assert (security.max_receive_before_auth, security.failed_authentication_delay_s) == (1000, 0)
    assert security.tls_config is None  # no ssl.* setting: the throwaway CA when a TLS listener needs one
