"""The image's entrypoint (the `mockbroker` command) started as a subprocess with the environment a compose
file sets: listeners on two loopback addresses, each advertising its own address to the clients that
bootstrap through it (Metadata via the raw client; produce/consume with confluent-kafka and the Java
client), the apache/kafka and bitnami/kafka documented environments unchanged, the example stack of
docker/compose.yaml run offline, the healthcheck subcommand, the control endpoint over HTTP, and the
start-up errors (exit code 2, one message)."""

from __future__ import annotations

import base64
import json
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from typing import Any

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

from tests.docker.support import (
    DOCKER,
    REPO,
    compose_env,
    entrypoint,
    entrypoint_argv,
    free_port,
    image_env,
    listening_addresses,
    load_compose,
    run_entrypoint,
    split_address,
)
from tests.rawclient import RawClient

METADATA = 3
TIMEOUT = 20.0


def metadata_brokers(address: str) -> list[tuple[int, str, int]]:
    host, port = split_address(address)
    with RawClient(host, port) as c:
        meta = c.request(METADATA, 12, {"topics": None})
    return [(b.node_id, b.host, b.port) for b in meta.brokers]


def confluent_produce(bootstrap: str, topic: str, values: list[bytes]) -> list[tuple[int | None, int | None]]:
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    out: list[tuple[int | None, int | None]] = []
    errors: list[Any] = []
    for v in values:
        p.produce(topic, v, key=v, partition=0,
                  on_delivery=lambda err, msg: errors.append(err) if err else out.append((msg.partition(), msg.offset())))
    assert p.flush(TIMEOUT) == 0
    assert errors == []
    return sorted(out)


def confluent_consume(bootstrap: str, topic: str, count: int) -> list[bytes | None]:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "docker-test", "enable.auto.commit": False})
    try:
        c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        got: list[bytes | None] = []
        deadline = time.monotonic() + TIMEOUT
        while len(got) < count and time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is None:
                continue
            assert m.error() is None, m.error()
            got.append(m.value())
        return got
    finally:
        c.close()


def two_listener_env() -> tuple[dict[str, str], str, str]:
    internal = f"127.0.0.2:{free_port('127.0.0.2')}"
    external = f"127.0.0.1:{free_port('127.0.0.1')}"
    env = {
        "KAFKA_NODE_ID": "1",
        "KAFKA_PROCESS_ROLES": "broker,controller",
        "KAFKA_LISTENERS": f"INTERNAL://{internal},EXTERNAL://{external},CONTROLLER://127.0.0.1:{free_port()}",
        "KAFKA_ADVERTISED_LISTENERS": f"INTERNAL://{internal},EXTERNAL://{external}",
        "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "KAFKA_INTER_BROKER_LISTENER_NAME": "INTERNAL",
        "KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER",
        "KAFKA_CONTROLLER_QUORUM_VOTERS": "1@127.0.0.1:9093",
        "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR": "1",
        "KAFKA_AUTO_CREATE_TOPICS_ENABLE": "true",
        "CLUSTER_ID": "4L6g3nShT-eMCtK--X86sw",
        "KAFKA_BROKER_RACK": "rack-a",
        "MOCKBROKER_TOPICS": "orders:1",
    }
    return env, internal, external


# -- listeners -----------------------------------------------------------------------------------------


@pytest.mark.interop
def test_each_listener_advertises_its_own_address_and_confluent_round_trips_through_each() -> None:
    env, internal, external = two_listener_env()
    with entrypoint(env) as ep:
        assert listening_addresses(ep.lines[0]) == [(internal, internal), (external, external)]
        assert metadata_brokers(internal) == [(1, *split_address(internal))]
        assert metadata_brokers(external) == [(1, *split_address(external))]
        with RawClient(*split_address(external)) as c:
            assert [b.rack for b in c.request(METADATA, 12, {"topics": None}).brokers] == ["rack-a"]
        assert confluent_produce(internal, "orders", [b"a", b"b"]) == [(0, 0), (0, 1)]
        assert confluent_produce(external, "orders", [b"c"]) == [(0, 2)]
        assert confluent_consume(external, "orders", 3) == [b"a", b"b", b"c"]
        assert confluent_consume(internal, "orders", 3) == [b"a", b"b", b"c"]
        controller_port = int(env["KAFKA_LISTENERS"].rsplit(":", 1)[1])
        with pytest.raises(OSError):  # the controller listener is not bound
            socket.create_connection(("127.0.0.1", controller_port), timeout=2).close()


@pytest.mark.interop
@pytest.mark.java
def test_the_java_client_sees_the_advertised_address_of_the_listener_it_bootstraps_through() -> None:
    from tests.interop.clients import of_type, require_java, run_java

    require_java()
    env, internal, external = two_listener_env()
    with entrypoint(env):
        for address in (internal, external):
            [result] = of_type(run_java("admin", {"bootstrap": address, "op": "describeCluster"}, timeout=90),
                               "result")
            host, port = split_address(address)
            assert [(n["id"], n["host"], n["port"]) for n in result["nodes"]] == [(1, host, port)], result
        lines = run_java("produce", {"bootstrap": internal, "topic": "orders",
                                     "records": [{"key": "k1", "value": "java-1"}, {"key": "k2", "value": "java-2"}]},
                         timeout=90)
        assert [s["offset"] for s in of_type(lines, "sent")] == [0, 1]
        lines = run_java("consume", {"bootstrap": external, "topic": "orders", "until_end": True}, timeout=90)
        assert [r["value"] for r in of_type(lines, "record")] == ["java-1", "java-2"]


def _with_ports(env: dict[str, str], ports: dict[int, int]) -> dict[str, str]:
    """The documented environment with its well-known ports swapped for free ones."""
    out = {}
    for key, value in env.items():
        for old, new in ports.items():
            value = re.sub(rf":{old}\b", f":{new}", value)
        out[key] = value
    return out


@pytest.mark.interop
def test_the_apache_kafka_documented_environment_starts_unchanged() -> None:
    from tests.docker.test_envconfig import APACHE_KAFKA_ENV

    port, controller = free_port(), free_port()
    env = _with_ports(APACHE_KAFKA_ENV, {9092: port, 9093: controller})
    with entrypoint(env) as ep:
        [(bound, advertised)] = listening_addresses(ep.lines[0])
        assert advertised == f"localhost:{port}"
        assert metadata_brokers(f"127.0.0.1:{port}") == [(1, "localhost", port)]
        assert confluent_produce(f"localhost:{port}", "auto-created", [b"x"]) == [(0, 0)]
        assert confluent_consume(f"localhost:{port}", "auto-created", 1) == [b"x"]
    assert "WARNING" not in ep.stderr  # nothing in the documented settings is unknown


@pytest.mark.interop
def test_the_bitnami_documented_environment_starts_unchanged() -> None:
    from tests.docker.test_envconfig import BITNAMI_ENV

    plain, controller, external = free_port(), free_port(), free_port()
    env = _with_ports(BITNAMI_ENV, {9092: plain, 9093: controller, 9094: external})
    with entrypoint(env) as ep:
        assert listening_addresses(ep.lines[0]) == [(f"0.0.0.0:{plain}", f"kafka:{plain}"),
                                                    (f"0.0.0.0:{external}", f"localhost:{external}")]
        assert metadata_brokers(f"127.0.0.1:{plain}") == [(0, "kafka", plain)]
        assert metadata_brokers(f"127.0.0.1:{external}") == [(0, "localhost", external)]
        assert confluent_produce(f"localhost:{external}", "bitnami", [b"y"]) == [(0, 0)]
        assert confluent_consume(f"localhost:{external}", "bitnami", 1) == [b"y"]


@pytest.mark.interop
def test_the_example_compose_stack_runs_offline() -> None:
    """docker/compose.yaml: the broker's environment as written plus the image's ENV (ports swapped, the
    service name resolved to 127.0.0.2), the producer service's kcat command, the consumer service's
    script, and the control endpoint."""
    from tests.interop.clients import run_kcat

    compose = load_compose()
    internal, external, controller, http = (free_port("127.0.0.2"), free_port(), free_port(), free_port())
    secure = free_port("127.0.0.2")
    env = _with_ports(compose_env(), {29092: internal, 9092: external, 9093: controller, 29094: secure})
    env = {k: v.replace("mockbroker:", "127.0.0.2:") for k, v in env.items()}
    env["MOCKBROKER_HTTP_PORT"] = str(http)
    env = {**image_env(), **env, "MOCKBROKER_SCHEMA_REGISTRY_PORT": ""}  # not the shared machine's port 8081
    assert env["MOCKBROKER_HOST"] == "0.0.0.0"
    with entrypoint(env) as ep:
        assert ep.read_line() == f"mockbroker control endpoint on http://localhost:{http}"
        assert metadata_brokers(f"127.0.0.2:{internal}") == [(1, "127.0.0.2", internal)]
        assert metadata_brokers(f"127.0.0.1:{external}") == [(1, "localhost", external)]
        with RawClient("127.0.0.2", secure) as sasl:  # SASL_PLAINTEXT: a request before logging in is closed
            sasl.send(3, 12, {"topics": None})
            assert sasl.is_closed_by_peer()
        args = [a.replace("mockbroker:29094", f"127.0.0.2:{secure}").replace("/examples/", f"{DOCKER}/examples/")
                for a in compose["services"]["producer"]["command"]]
        assert "security.protocol=SASL_PLAINTEXT" in args
        run_kcat(args)  # logs in as alice on the SECURE listener
        consumer = compose["services"]["consumer"]["environment"]
        proc = subprocess.run([sys.executable, str(DOCKER / "examples" / "consume.py")], capture_output=True,
                              text=True, timeout=60,
                              env={"BOOTSTRAP_SERVERS": f"localhost:{external}", "TOPIC": consumer["TOPIC"],
                                   "EXPECT": consumer["EXPECT"], "TIMEOUT_SECONDS": "30",
                                   "PYTHONPATH": str(REPO)})
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.splitlines()[-1] == "consume: read 3 records from orders"
        # The broker has a SASL user, so the control endpoint wants its HTTP Basic credentials.
        alice = {"Authorization": "Basic " + base64.b64encode(b"alice:alice-secret").decode()}
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"http://127.0.0.1:{http}/topics/orders/records", timeout=10)
        assert refused.value.code == 401
        with urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{http}/topics/orders/records",
                                                           headers=alice), timeout=10) as resp:
            records = json.load(resp)["records"]
        assert sorted(r["key"] for r in records) == ["order-1", "order-2", "order-3"]
        assert {r["value_encoding"] for r in records} == {"utf-8"}
        with urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{http}/requests?api_key=0",
                                                           headers=alice), timeout=10) as resp:
            produced = json.load(resp)["requests"]
        assert {(r["principal"], r["listener"]) for r in produced} == {("User:alice", "SECURE")}


# -- healthcheck -------------------------------------------------------------------------------------


def healthcheck(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return run_entrypoint(env, "healthcheck", *args)


@pytest.mark.interop
def test_healthcheck_exits_0_against_a_running_broker_and_1_against_a_closed_port() -> None:
    env, internal, external = two_listener_env()
    with entrypoint(env):
        ok = healthcheck({}, "--bootstrap", external)
        assert (ok.returncode, ok.stdout.strip()) == (0, f"ok {external}")
        both = healthcheck(env)  # no --bootstrap: every listener the environment configures
        assert (both.returncode, both.stdout.strip()) == (0, f"ok {internal},{external}")
    closed = healthcheck({}, "--bootstrap", f"127.0.0.1:{free_port()}", "--timeout", "2")
    assert closed.returncode == 1
    assert "ConnectionRefusedError" in closed.stderr and closed.stdout == ""
    after = healthcheck(env, "--timeout", "2")
    assert after.returncode == 1


@pytest.mark.interop  # two subprocesses, about a second
def test_healthcheck_rejects_a_bad_address_and_a_bad_environment() -> None:
    # A bad argument is a usage error (2); a bad environment reads as unhealthy (1: Docker reserves 2).
    assert healthcheck({}, "--bootstrap", "nohostport").returncode == 2
    bad = healthcheck({"KAFKA_LISTENERS": "INTERNAL://:9092"})
    assert bad.returncode == 1 and "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP" in bad.stderr


# -- start-up messages ----------------------------------------------------------------------------------


def one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    return lines[0]


@pytest.mark.parametrize("env,args,fragment", [
    ({"KAFKA_NODE_ID": "1", "KAFKA_BROKER_ID": "2"}, (), "disagree"),
    ({"KAFKA_NUM_PARTITIONS": "3", "KAFKA_CFG_NUM_PARTITIONS": "4"}, (), "KAFKA_CFG_NUM_PARTITIONS"),
    ({"KAFKA_LISTENERS": "PLAINTEXT://127.0.0.1:0", "KAFKA_ADVERTISED_LISTENERS": "EXTERNAL://localhost:9092"},
     (), "EXTERNAL"),
    ({"KAFKA_LISTENERS": "SASL_SSL://127.0.0.1:0", "KAFKA_CLIENT_USERS": "a,b", "KAFKA_CLIENT_PASSWORDS": "x"}, (),
     "one password per user"),
    ({"KAFKA_LISTENERS": "SASL_SSL://127.0.0.1:0", "KAFKA_SASL_ENABLED_MECHANISMS": "GSSAPI"}, (), "not served"),
    ({"MOCKBROKER_TOPICS": "bad name"}, (), "illegal"),
    ({}, ("--config", "novalue"), "KEY=VALUE"),
    ({}, ("--port", "0", "--listener", "PLAINTEXT://127.0.0.1:0"), "not both"),
])
def test_conflicting_settings_exit_2_with_one_message(env: dict[str, str], args: tuple[str, ...], fragment: str) -> None:
    proc = run_entrypoint(env, *args)
    assert proc.returncode == 2
    line = one_line(proc.stderr)
    assert line.startswith("mockbroker: ") and fragment in line and "Traceback" not in proc.stderr


def test_an_address_in_use_exits_1_with_one_message() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        proc = run_entrypoint({"KAFKA_LISTENERS": f"PLAINTEXT://127.0.0.1:{port}"})
    assert proc.returncode == 1
    assert "cannot listen on PLAINTEXT 127.0.0.1:" in one_line(proc.stderr)


def test_unknown_settings_are_one_warning_line_and_the_broker_starts() -> None:
    env = {"KAFKA_LISTENERS": "PLAINTEXT://127.0.0.1:0", "KAFKA_FOO_BAR": "1", "KAFKA_CFG_BAZ": "2",
           "KAFKA_HEAP_OPTS": "-Xmx1G", "KAFKA_JMX_PORT": "9999", "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR": "1"}
    with entrypoint(env) as ep:
        address = listening_addresses(ep.lines[0])[0][0]
        assert metadata_brokers(address)
    warning = one_line(ep.stderr)
    assert "WARNING" in warning and "baz (KAFKA_CFG_BAZ)" in warning and "foo.bar (KAFKA_FOO_BAR)" in warning


def test_serve_is_an_alias_and_no_env_ignores_the_environment() -> None:
    with entrypoint({"KAFKA_LISTENERS": "SASL_SSL://127.0.0.1:0"}, "serve", "--no-env", "--port", "0") as ep:
        assert listening_addresses(ep.lines[0])[0][0].startswith("127.0.0.1:")


# -- the control endpoint through the command ---------------------------------------------------------------


def http(method: str, url: str, body: Any = None) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.load(resp)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


@pytest.mark.interop
def test_the_control_endpoint_of_the_command_drives_the_broker() -> None:
    env, internal, external = two_listener_env()
    port = free_port()
    env["MOCKBROKER_HTTP_PORT"] = str(port)
    with entrypoint(env, "--http-host", "127.0.0.1") as ep:
        base = f"http://127.0.0.1:{port}"
        assert ep.read_line() == f"mockbroker control endpoint on {base}"
        assert http("GET", f"{base}/topics")[1]["topics"][0]["name"] == "orders"
        assert http("POST", f"{base}/topics", {"name": "payments", "partitions": 2})[0] == 201
        confluent_produce(external, "payments", [b"p1"])
        status, body = http("GET", f"{base}/topics/payments/records?partition=0")
        assert (status, [r["value"] for r in body["records"]]) == (200, ["p1"])
        assert http("POST", f"{base}/faults", {"api_key": "Produce", "error": "NOT_LEADER_OR_FOLLOWER"})[0] == 201
        assert http("DELETE", f"{base}/faults")[1] == {"cleared": 1}
        assert http("POST", f"{base}/clock/advance", {"seconds": 1})[0] == 200
        # Back to the state at start: payments gone, orders (made at start) there again, empty.
        assert http("POST", f"{base}/reset")[1]["deleted_topics"] == ["payments"]
        assert http("GET", f"{base}/topics/payments") == (404, {"error": "unknown_topic",
                                                               "message": "no topic 'payments'"})
        assert http("GET", f"{base}/topics/orders/records")[1]["records"] == []
        assert http("POST", f"{base}/topics", None)[0] == 400
        assert http("GET", f"{base}/nowhere")[0] == 404
        assert metadata_brokers(internal)  # the broker is still serving


def test_entrypoint_is_the_console_script_when_installed() -> None:
    argv = entrypoint_argv()
    assert argv[-1].endswith("mockbroker")


@pytest.mark.interop
def test_a_sasl_ssl_listener_from_the_kafka_environment_serves_scram_next_to_plaintext(tmp_path: Any) -> None:
    ca = tmp_path / "ca.pem"
    env = {"KAFKA_LISTENERS": "PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
           "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL",
           "KAFKA_CLIENT_USERS": "alice", "KAFKA_CLIENT_PASSWORDS": "s3cret",
           "KAFKA_SASL_ENABLED_MECHANISMS": "PLAIN,SCRAM-SHA-512", "MOCKBROKER_SSL_CA_OUT": str(ca)}
    with entrypoint(env) as ep:
        line = ep.lines[0]
        assert "[SASL_SSL]" in line
        [(plain, _), (secured, _)] = listening_addresses(line)
        assert ca.read_bytes().startswith(b"-----BEGIN CERTIFICATE-----")
        conf = {"bootstrap.servers": secured, "security.protocol": "SASL_SSL", "ssl.ca.location": str(ca),
                "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "alice", "sasl.password": "s3cret"}
        producer = Producer(conf)
        producer.produce("secured-topic", b"over SASL_SSL")
        assert producer.flush(30) == 0
        assert confluent_consume(plain, "secured-topic", 1) == [b"over SASL_SSL"]
        failures: list[Any] = []
        wrong = Producer({**conf, "sasl.password": "wrong", "error_cb": failures.append})
        wrong.produce("secured-topic", b"never")
        deadline = time.monotonic() + 30
        while not any("Authentication" in str(e) or "SASL" in str(e) for e in failures) and time.monotonic() < deadline:
            wrong.poll(0.2)
        assert any("Authentication" in str(e) or "SASL" in str(e) for e in failures), failures
