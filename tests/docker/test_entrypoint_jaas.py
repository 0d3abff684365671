"""The image's entrypoint (`python -m mockbroker` as a subprocess) with the apache/kafka image's SASL variables:
the per-listener JAAS configs (KAFKA_LISTENER_NAME_SASL__PLAINTEXT_<MECH>_SASL_JAAS_CONFIG) or a JAAS file
through KAFKA_OPTS, SCRAM users in kafka-storage format's --add-scram form (MOCKBROKER_SCRAM_CREDENTIALS);
confluent-kafka and kcat produce and consume over SASL_PLAINTEXT with PLAIN and SCRAM-SHA-256, and a wrong
password is refused.

kcat built on librdkafka before 2.6.1 (Debian 12's has 2.0.2) sends a wrong nonce in SCRAM's last message
(confluentinc/librdkafka#4895), which Kafka 4.x refuses, and so does mockbroker: with such a kcat the SCRAM
case checks that refusal (tests/interop/test_security_librdkafka.py does the same)."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition

from tests.docker.support import (
    DOCKER,
    REPO,
    entrypoint,
    free_port,
    image_env,
    listening_addresses,
    load_compose,
)

pytestmark = pytest.mark.interop  # subprocesses and real clients, a few seconds

PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
TIMEOUT = 30.0
# (mechanism, user, password): alice is a PLAIN user of the JAAS config, bob a SCRAM-SHA-256 credential.
LOGINS = [("PLAIN", "alice", "alice-secret"), ("SCRAM-SHA-256", "bob", "bob-secret")]


def apache_kafka_env(port: int, controller: int) -> dict[str, str]:
    """What apache/kafka's documentation sets for a combined KRaft node with a SASL_PLAINTEXT listener."""
    return {
        "KAFKA_NODE_ID": "1",
        "KAFKA_PROCESS_ROLES": "broker,controller",
        "KAFKA_LISTENERS": f"SASL_PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller}",
        "KAFKA_ADVERTISED_LISTENERS": f"SASL_PLAINTEXT://127.0.0.1:{port}",
        "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
        "KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER",
        "KAFKA_CONTROLLER_QUORUM_VOTERS": f"1@127.0.0.1:{controller}",
        "KAFKA_INTER_BROKER_LISTENER_NAME": "SASL_PLAINTEXT",
        "KAFKA_SASL_MECHANISM_INTER_BROKER_PROTOCOL": "PLAIN",
        "KAFKA_SASL_ENABLED_MECHANISMS": "PLAIN,SCRAM-SHA-256",
        "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR": "1",
        "CLUSTER_ID": "4L6g3nShT-eMCtK--X86sw",
        "MOCKBROKER_SCRAM_CREDENTIALS": "SCRAM-SHA-256=[name=bob,password=bob-secret]",
    }


@pytest.fixture(params=["listener-variables", "jaas-file"])
def bootstrap(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    port, controller = free_port(), free_port()
    env = apache_kafka_env(port, controller)
    plain = f'{PLAIN} required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";'
    scram = f'{SCRAM} required username="admin" password="admin-secret";'
    if request.param == "listener-variables":
        env["KAFKA_LISTENER_NAME_SASL__PLAINTEXT_PLAIN_SASL_JAAS_CONFIG"] = plain
        env["KAFKA_LISTENER_NAME_SASL__PLAINTEXT_SCRAM___SHA___256_SASL_JAAS_CONFIG"] = scram
    else:
        jaas = tmp_path / "kafka_server_jaas.conf"
        jaas.write_text(f"KafkaServer {{\n  {plain}\n  {scram}\n}};\n")
        env["KAFKA_OPTS"] = f"-Djava.security.auth.login.config={jaas}"
    with entrypoint(env) as ep:
        ((bound, advertised),) = listening_addresses(ep.lines[0].removesuffix(" [SASL_PLAINTEXT]"))
        assert advertised == f"127.0.0.1:{port}"
        yield advertised


def client_config(bootstrap: str, mechanism: str, user: str, password: str) -> dict[str, str]:
    return {"bootstrap.servers": bootstrap, "security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": mechanism,
            "sasl.username": user, "sasl.password": password}


def confluent_round_trip(bootstrap: str, topic: str, mechanism: str, user: str, password: str) -> list[bytes]:
    config = client_config(bootstrap, mechanism, user, password)
    p = Producer(config | {"linger.ms": "5"})
    errors: list[object] = []
    for value in (b"one", b"two"):
        p.produce(topic, value, partition=0, on_delivery=lambda err, msg: errors.append(err) if err else None)
    assert p.flush(TIMEOUT) == 0 and errors == []
    c = Consumer(config | {"group.id": f"g-{topic}", "enable.auto.commit": "false"})
    got: list[bytes] = []
    try:
        c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        deadline = time.monotonic() + TIMEOUT
        while len(got) < 2 and time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is not None:
                assert m.error() is None, m.error()
                got.append(m.value())
    finally:
        c.close()
    return got


def kcat_librdkafka_version() -> tuple[int, ...]:
    out = subprocess.run(["kcat", "-V"], capture_output=True, text=True, timeout=30).stdout
    found = re.search(r"librdkafka (\d+)\.(\d+)\.(\d+)", out)
    return tuple(int(x) for x in found.groups()) if found else (0, 0, 0)


def kcat_args(bootstrap: str, mechanism: str, user: str, password: str) -> list[str]:
    return ["-b", bootstrap, "-X", "security.protocol=SASL_PLAINTEXT", "-X", f"sasl.mechanisms={mechanism}",
            "-X", f"sasl.username={user}", "-X", f"sasl.password={password}"]


@pytest.mark.parametrize(("mechanism", "user", "password"), LOGINS)
def test_confluent_kafka_produces_and_consumes(bootstrap: str, mechanism: str, user: str, password: str) -> None:
    topic = f"confluent-{mechanism.lower()}"
    assert confluent_round_trip(bootstrap, topic, mechanism, user, password) == [b"one", b"two"]


@pytest.mark.parametrize(("mechanism", "user", "password"), LOGINS)
def test_kcat_produces_and_consumes(bootstrap: str, mechanism: str, user: str, password: str) -> None:
    from tests.interop.clients import run_kcat

    topic = f"kcat-{mechanism.lower()}"
    args = kcat_args(bootstrap, mechanism, user, password)
    if mechanism.startswith("SCRAM") and kcat_librdkafka_version() < (2, 6, 1):
        proc = run_kcat([*args, "-P", "-t", topic, "-p", "0"], input="one\n", check=False)
        assert proc.returncode != 0 and b"Authentication failed" in proc.stderr, proc.stderr
        return
    run_kcat([*args, "-P", "-t", topic, "-p", "0"], input="one\ntwo\n")
    proc = run_kcat([*args, "-C", "-t", topic, "-p", "0", "-o", "beginning", "-c", "2", "-e"])
    assert proc.stdout.decode().split() == ["one", "two"]


@pytest.mark.parametrize(("mechanism", "user", "password"), [
    ("PLAIN", "alice", "wrong"), ("SCRAM-SHA-256", "bob", "wrong"),
    ("SCRAM-SHA-256", "alice", "alice-secret"),  # alice is a PLAIN user only
    ("PLAIN", "bob", "bob-secret"),  # bob has a SCRAM-SHA-256 credential only
])
def test_a_wrong_login_is_refused(bootstrap: str, mechanism: str, user: str, password: str) -> None:
    errors: list[KafkaError] = []
    p = Producer(client_config(bootstrap, mechanism, user, password) | {"error_cb": errors.append})
    deadline = time.monotonic() + TIMEOUT
    while not errors and time.monotonic() < deadline:
        p.poll(0.2)
    assert errors and errors[0].code() == KafkaError._AUTHENTICATION, errors


def test_the_sasl_compose_example_runs_offline() -> None:
    """docker/compose.sasl.yaml: the broker's environment as written plus the image's ENV (ports swapped, the
    service name resolved to 127.0.0.1, the JAAS file at its place in the repository), the producer
    service's kcat command (PLAIN) and the consumer service's script (SCRAM-SHA-256)."""
    from tests.interop.clients import run_kcat

    compose = load_compose(DOCKER / "compose.sasl.yaml")
    port, controller = free_port(), free_port()
    env = {k: str(v) for k, v in compose["services"]["mockbroker"]["environment"].items()}
    env = {k: re.sub(r":9093\b", f":{controller}", re.sub(r":9092\b", f":{port}", v)) for k, v in env.items()}
    env = {k: v.replace("mockbroker:", "127.0.0.1:") for k, v in env.items()}
    [volume] = compose["services"]["mockbroker"]["volumes"]
    local, mounted = volume.split(":")[:2]
    assert mounted in env["KAFKA_OPTS"]
    env["KAFKA_OPTS"] = env["KAFKA_OPTS"].replace(mounted, str(DOCKER / local))
    env = {**image_env(), **env, "MOCKBROKER_HTTP_PORT": "", "MOCKBROKER_SCHEMA_REGISTRY_PORT": ""}
    with entrypoint(env) as ep:
        assert ep.lines[0] == f"mockbroker listening on 0.0.0.0:{port} (advertised as 127.0.0.1:{port}) [SASL_PLAINTEXT]"
        args = [a.replace("mockbroker:9092", f"127.0.0.1:{port}").replace("/examples/", f"{DOCKER}/examples/")
                for a in compose["services"]["producer"]["command"]]
        assert "sasl.mechanisms=PLAIN" in args
        run_kcat(args)  # alice, a user of the JAAS file
        consumer = {k: str(v) for k, v in compose["services"]["consumer"]["environment"].items()}
        assert consumer["SASL_MECHANISM"] == "SCRAM-SHA-256"
        consumer.update({"BOOTSTRAP_SERVERS": f"127.0.0.1:{port}", "TIMEOUT_SECONDS": "30", "PYTHONPATH": str(REPO)})
        proc = subprocess.run([sys.executable, str(DOCKER / "examples" / "consume.py")], capture_output=True,
                              text=True, timeout=60, env=consumer)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.splitlines()[-1] == "consume: read 3 records from orders"
