"""The image tier: the image docker/Dockerfile builds, run by a real Docker daemon (scripts/docker-test
builds it with a private dockerd and runs this module; marker docker_image).

Every container uses the host's network and binds loopback addresses only, on ports free at the time;
every test removes its containers. What is proved: the image turns healthy by its own HEALTHCHECK; a
client on the host produces and consumes through the advertised listener; the Kafka-image environment
takes effect inside the container; the HTTP control endpoint answers; SIGTERM stops it with exit 0; it runs
as a non-root user; a bad setting exits 2 with one message; docker/compose.yaml with the host-network
override (docker/compose.host.yaml) comes up with docker-compose and its kcat producer and Python consumer
containers (images built locally from the same Debian base) move the example records; a volume on
KAFKA_LOG_DIRS keeps topics and records across a container restart; the Schema Registry answers on 8081 by
default and takes cp-schema-registry's variables.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource

from tests.docker.support import DOCKER, REPO, free_port, listening_addresses
from tests.docker.test_entrypoint import METADATA, confluent_consume, confluent_produce, metadata_brokers
from tests.rawclient import RawClient

IMAGE = os.environ.get("MOCKBROKER_TEST_IMAGE", "")
if not IMAGE:
    if os.environ.get("CI") == "true":
        raise RuntimeError("CI never skips the image tier: run it through scripts/docker-test")
    pytest.skip("image tier: no image built (scripts/docker-test builds one with a private dockerd and runs "
                "this tier)", allow_module_level=True)

pytestmark = pytest.mark.docker_image

DOCKER_CLI = os.environ.get("MOCKBROKER_TEST_DOCKER", "docker")
KCAT_IMAGE = os.environ.get("MOCKBROKER_TEST_KCAT_IMAGE", "mockbroker-test-kcat:local")
PYCLIENT_IMAGE = os.environ.get("MOCKBROKER_TEST_PYCLIENT_IMAGE", "mockbroker-test-pyclient:local")
WAIT = 90.0  # bound of every wait for a container state (a busy machine)
IMAGE_USER = "10001"


def docker(*args: str, timeout: float = 120.0, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([DOCKER_CLI, *args], capture_output=True, text=True, timeout=timeout)
    if check:
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    return proc


def inspect(container: str) -> dict[str, Any]:
    state: dict[str, Any] = json.loads(docker("inspect", container).stdout)[0]
    return state


def wait_for(what: str, predicate: Any, timeout: float = WAIT) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, f"not {what} after {timeout} s"
        time.sleep(0.2)


@contextmanager
def container(env: dict[str, str], *args: str, health_interval: str | None = "1s",
              volumes: tuple[str, ...] = (), registry_default: bool = False) -> Iterator[str]:
    """A detached container of the image on the host's network; removed at the end. health_interval
    None keeps the image's own HEALTHCHECK timing; volumes are HOST:CONTAINER bind mounts. The image's Schema
    Registry goes to a free port unless `env` places it or `registry_default` keeps the image's 8081."""
    if not registry_default and not {"MOCKBROKER_SCHEMA_REGISTRY_PORT", "SCHEMA_REGISTRY_LISTENERS"} & set(env):
        env = {**env, "MOCKBROKER_SCHEMA_REGISTRY_PORT": "0"}  # a free port, chosen by the registry
    options = ["--network", "host", "--name", f"mockbroker-test-{uuid.uuid4().hex[:10]}"]
    for volume in volumes:
        options += ["--volume", volume]
    if health_interval is not None:
        options += ["--health-interval", health_interval, "--health-start-period", "0s"]
    for key, value in env.items():
        options += ["--env", f"{key}={value}"]
    cid = docker("run", "--detach", *options, IMAGE, *args).stdout.strip()
    try:
        yield cid
    finally:
        docker("rm", "--force", cid, check=False)


def health(cid: str) -> str:
    status: str = inspect(cid)["State"].get("Health", {}).get("Status", "")
    return status


def logs(cid: str) -> str:
    proc = docker("logs", cid)
    return proc.stdout + proc.stderr


def http_json(url: str, body: dict[str, Any] | None = None, user: tuple[str, str] | None = None) -> Any:
    """A JSON answer of the HTTP endpoint; `user` sends HTTP Basic credentials (a broker with SASL users wants them)."""
    data = None if body is None else json.dumps(body).encode()
    headers = {}
    if user is not None:
        headers["Authorization"] = "Basic " + base64.b64encode(f"{user[0]}:{user[1]}".encode()).decode()
    with urllib.request.urlopen(urllib.request.Request(url, data=data, headers=headers), timeout=30) as resp:
        return json.load(resp)


def answers(address: str) -> bool:
    host, port = address.rsplit(":", 1)
    try:
        with RawClient(host, int(port)) as c:
            c.request(METADATA, 12, {"topics": None})
        return True
    except OSError:
        return False


def loopback_env() -> tuple[dict[str, str], int, int]:
    """One PLAINTEXT listener and the control endpoint, both on 127.0.0.1 (the image's defaults bind every
    interface: on the host's network the tests keep to loopback)."""
    port, http = free_port(), free_port()
    return ({"MOCKBROKER_HOST": "127.0.0.1", "MOCKBROKER_PORT": str(port), "MOCKBROKER_HTTP_PORT": str(http)},
            port, http)


# -- the image's metadata -------------------------------------------------------------------------------


def test_the_image_runs_mockbroker_as_a_non_root_user_with_its_healthcheck_and_ports() -> None:
    config = json.loads(docker("image", "inspect", IMAGE).stdout)[0]["Config"]
    assert config["User"] == f"{IMAGE_USER}:{IMAGE_USER}"
    assert config["Entrypoint"] == ["mockbroker"]
    assert set(config["ExposedPorts"]) == {"9092/tcp", "8080/tcp", "8081/tcp"}
    env = dict(item.split("=", 1) for item in config["Env"])
    assert env["MOCKBROKER_HOST"] == "0.0.0.0" and env["MOCKBROKER_HTTP_PORT"] == "8080"
    assert env["MOCKBROKER_SCHEMA_REGISTRY_PORT"] == "8081"
    assert env["MOCKBROKER_DEFAULTS"] == "test"
    assert config["Healthcheck"]["Test"][:3] == ["CMD", "mockbroker", "healthcheck"]
    # No pip, no compilers, no sources in the image: the venv runs Debian's python3.
    listing = docker("run", "--rm", "--network", "host", "--entrypoint", "sh", IMAGE, "-c",
                     "ls /opt/mockbroker/bin; test -e /src && echo SRC; command -v gcc pip pip3 || true").stdout
    assert "mockbroker" in listing.split() and "SRC" not in listing and "pip" not in listing


# -- start, health, clients from the host ---------------------------------------------------------------


def test_it_turns_healthy_and_a_host_client_produces_and_consumes_through_the_advertised_listener() -> None:
    external, internal, http = free_port(), free_port("127.0.0.2"), free_port()
    env = {
        "KAFKA_LISTENERS": f"EXTERNAL://127.0.0.1:{external},INTERNAL://127.0.0.2:{internal}",
        "KAFKA_ADVERTISED_LISTENERS": f"EXTERNAL://127.0.0.1:{external},INTERNAL://mockbroker-internal:{internal}",
        "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "EXTERNAL:PLAINTEXT,INTERNAL:PLAINTEXT",
        "KAFKA_INTER_BROKER_LISTENER_NAME": "INTERNAL",
        "KAFKA_NUM_PARTITIONS": "3",
        "MOCKBROKER_HTTP_HOST": "127.0.0.1", "MOCKBROKER_HTTP_PORT": str(http),
    }
    with container(env, health_interval=None) as cid:   # the image's own HEALTHCHECK timing
        wait_for("healthy", lambda: health(cid) == "healthy")
        # Each listener advertises its own address to the clients that bootstrap through it.
        assert metadata_brokers(f"127.0.0.2:{internal}") == [(1, "mockbroker-internal", internal)]
        assert metadata_brokers(f"127.0.0.1:{external}") == [(1, "127.0.0.1", external)]
        values = [b"record-%03d" % i for i in range(100)]
        delivered = confluent_produce(f"127.0.0.1:{external}", "fresh", values)
        assert delivered == [(0, offset) for offset in range(100)]
        assert confluent_consume(f"127.0.0.1:{external}", "fresh", 100) == values
        # Auto-created with KAFKA_NUM_PARTITIONS partitions; the control endpoint sees the records.
        topic = http_json(f"http://127.0.0.1:{http}/topics/fresh")
        assert len(topic["partitions"]) == 3
        assert [p["high_watermark"] for p in sorted(topic["partitions"], key=lambda p: p["partition"])] == [100, 0, 0]
        assert health(cid) == "healthy" and "Traceback" not in logs(cid)


def test_the_kafka_image_environment_takes_effect_inside_the_container() -> None:
    env, port, http = loopback_env()
    env.update({
        "KAFKA_AUTO_CREATE_TOPICS_ENABLE": "false",
        "KAFKA_NUM_PARTITIONS": "4",
        "KAFKA_CREATE_TOPICS": "created:2:1:compact",
        "MOCKBROKER_TOPICS": "orders",
        "KAFKA_LOG_RETENTION_MS": "7200000",
        "KAFKA_CFG_MESSAGE_MAX_BYTES": "2000000",
        "KAFKA_NODE_ID": "7",
        "CLUSTER_ID": "4L6g3nShT-eMCtK--X86sw",
    })
    with container(env) as cid:
        wait_for("healthy", lambda: health(cid) == "healthy")
        topics = {t["name"]: t for t in http_json(f"http://127.0.0.1:{http}/topics")["topics"]}
        assert topics["orders"]["partitions"] == 4
        assert topics["created"]["partitions"] == 2 and topics["created"]["config"] == {"cleanup.policy": "compact"}
        assert metadata_brokers(f"127.0.0.1:{port}") == [(7, "127.0.0.1", port)]
        # auto.create.topics.enable=false: a Metadata request asking for creation gets
        # UNKNOWN_TOPIC_OR_PARTITION and creates nothing.
        with RawClient("127.0.0.1", port) as c:
            meta = c.request(METADATA, 12, {"topics": [{"name": "missing", "topic_id": None}],
                                            "allow_auto_topic_creation": True})
        assert [(t.name, t.error_code) for t in meta.topics] == [("missing", 3)]
        assert meta.cluster_id == "4L6g3nShT-eMCtK--X86sw"
        assert "missing" not in {t["name"] for t in http_json(f"http://127.0.0.1:{http}/topics")["topics"]}
        admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{port}"})
        [future] = admin.describe_configs([ConfigResource(ConfigResource.Type.BROKER, "7")]).values()
        configs = {name: entry.value for name, entry in future.result(timeout=30).items()}
        assert configs["log.retention.ms"] == "7200000"
        assert configs["message.max.bytes"] == "2000000"
        assert configs["auto.create.topics.enable"] == "false" and configs["num.partitions"] == "4"


def test_the_http_control_endpoint_answers() -> None:
    env, port, http = loopback_env()
    with container(env) as cid:
        wait_for("healthy", lambda: health(cid) == "healthy")
        base = f"http://127.0.0.1:{http}"
        assert http_json(f"{base}/health")["status"] == "ok"
        created = http_json(f"{base}/topics", {"name": "payments", "partitions": 2})
        assert created["name"] == "payments"
        assert len(http_json(f"{base}/topics/payments")["partitions"]) == 2
        confluent_produce(f"127.0.0.1:{port}", "payments", [b"one", b"two"])
        records = http_json(f"{base}/topics/payments/records?partition=0")["records"]
        assert [r["value"] for r in records] == ["one", "two"]


def registry_json(url: str, body: dict[str, Any] | None = None, method: str | None = None) -> tuple[int, Any]:
    """The status and JSON body of a Schema Registry request (its 4xx answers included)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method,
                                     headers={"Content-Type": "application/vnd.schemaregistry.v1+json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            return resp.status, json.load(resp)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


def registry_up(base: str) -> bool:
    try:
        return registry_json(f"{base}/subjects")[0] == 200
    except OSError:
        return False


SCHEMA = json.dumps({"type": "record", "name": "Order", "fields": [{"name": "id", "type": "long"}]})


def test_the_image_serves_a_schema_registry_on_8081_by_default() -> None:
    """As cp-schema-registry: GET /subjects on port 8081 with nothing configured; a schema registered there is
    kept in the broker's `_schemas` topic (the control endpoint sees it)."""
    with socket.socket() as probe:  # the host's network: the image's fixed port must be free here
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind(("127.0.0.1", 8081))
    env, _, http = loopback_env()  # MOCKBROKER_HOST=127.0.0.1: the registry binds the broker's host
    with container(env, registry_default=True) as cid:
        wait_for("healthy", lambda: health(cid) == "healthy")
        base = "http://127.0.0.1:8081"
        wait_for("the registry answering", lambda: registry_up(base))
        assert registry_json(f"{base}/subjects") == (200, [])
        assert registry_json(f"{base}/subjects/orders-value/versions", {"schema": SCHEMA}) == (200, {"id": 1})
        assert registry_json(f"{base}/subjects") == (200, ["orders-value"])
        assert registry_json(f"{base}/config") == (200, {"compatibilityLevel": "BACKWARD"})
        topic = http_json(f"http://127.0.0.1:{http}/topics/_schemas")
        assert len(topic["partitions"]) == 1 and topic["config"]["cleanup.policy"] == "compact"
        assert "mockbroker schema registry on http://127.0.0.1:8081" in logs(cid)
        assert "Traceback" not in logs(cid)


def test_cp_schema_registry_variables_take_effect_inside_the_container() -> None:
    env, _, _ = loopback_env()
    registry = free_port()
    env.update({"SCHEMA_REGISTRY_LISTENERS": f"http://0.0.0.0:{registry}",
                "SCHEMA_REGISTRY_HOST_NAME": "schema-registry",
                "SCHEMA_REGISTRY_KAFKASTORE_BOOTSTRAP_SERVERS": "PLAINTEXT://mockbroker:9092",
                "SCHEMA_REGISTRY_SCHEMA_COMPATIBILITY_LEVEL": "full_transitive",
                "SCHEMA_REGISTRY_MODE_MUTABILITY": "false"})
    with container(env) as cid:
        wait_for("healthy", lambda: health(cid) == "healthy")
        base = f"http://127.0.0.1:{registry}"
        wait_for("the registry answering", lambda: registry_up(base))
        assert registry_json(f"{base}/config") == (200, {"compatibilityLevel": "FULL_TRANSITIVE"})
        status, body = registry_json(f"{base}/mode", {"mode": "READONLY"}, method="PUT")
        assert (status, body["error_code"]) == (422, 42205)
        assert registry_json(f"{base}/mode") == (200, {"mode": "READWRITE"})
        assert "Traceback" not in logs(cid)


def test_sigterm_stops_it_with_exit_0_and_it_runs_as_the_non_root_user() -> None:
    env, port, _ = loopback_env()
    with container(env) as cid:
        wait_for("listening", lambda: answers(f"127.0.0.1:{port}"))
        uid = docker("exec", cid, "sh", "-c", "grep '^Uid:' /proc/1/status").stdout.split()
        assert uid[1:] == [IMAGE_USER] * 4
        assert docker("exec", cid, "id", "-u").stdout.strip() == IMAGE_USER
        docker("kill", "--signal", "TERM", cid)
        state = wait_for("stopped", lambda: (s := inspect(cid)["State"])["Running"] is False and s)
        # Exit 0 by itself (a container killed after a stop timeout would show 137).
        assert state["ExitCode"] == 0 and state["OOMKilled"] is False
        assert "Traceback" not in logs(cid)


def test_a_volume_keeps_topics_and_records_across_a_container_restart(tmp_path: Path) -> None:
    data = tmp_path / "kafka-data"
    data.mkdir()
    os.chown(data, int(IMAGE_USER), int(IMAGE_USER))  # as the image's own /var/lib/kafka/data
    env, port, _ = loopback_env()
    env["KAFKA_LOG_DIRS"] = "/var/lib/kafka/data"
    address = f"127.0.0.1:{port}"
    values = [b"kept-%03d" % i for i in range(50)]
    with container(env, volumes=(f"{data}:/var/lib/kafka/data",)) as cid:
        wait_for("listening", lambda: answers(address))
        assert confluent_produce(address, "kept", values) == [(0, offset) for offset in range(50)]
        docker("restart", cid)  # what `docker compose restart` does: SIGTERM, then the same container again
        wait_for("listening again", lambda: answers(address))
        assert confluent_consume(address, "kept", 50) == values
        assert confluent_produce(address, "kept", [b"after"]) == [(0, 50)]
        assert "Traceback" not in logs(cid)
    assert (data / "meta.properties").exists()
    assert (data / "kept-0" / "00000000000000000000.log").stat().st_size > 0


def test_a_bad_setting_exits_2_with_one_message() -> None:
    proc = docker("run", "--rm", "--network", "host", "--env", "KAFKA_NODE_ID=1", "--env", "KAFKA_BROKER_ID=2",
                  IMAGE, check=False)
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("mockbroker: ") and "disagree" in lines[0], proc.stderr


# -- docker/compose.yaml with docker-compose ------------------------------------------------------------


def without_published_ports(config: str) -> str:
    """`docker-compose config` output less every service's `ports:` block (4 spaces in, its items deeper)."""
    out: list[str] = []
    skipping = False
    for line in config.splitlines():
        if line == "    ports:":
            skipping = True
            continue
        if skipping and (line.startswith("    - ") or line.startswith("      ")):
            continue
        skipping = False
        out.append(line)
    return "\n".join(out) + "\n"


def test_the_compose_stack_comes_up_and_its_client_containers_produce_and_consume(tmp_path: Path) -> None:
    ports = {"MB_INTERNAL_PORT": free_port(), "MB_EXTERNAL_PORT": free_port(), "MB_SECURE_PORT": free_port(),
             "MB_CONTROLLER_PORT": free_port(), "MB_HTTP_PORT": free_port()}
    env = {**os.environ, **{k: str(v) for k, v in ports.items()}, "MOCKBROKER_IMAGE": IMAGE,
           "KCAT_IMAGE": KCAT_IMAGE, "PYCLIENT_IMAGE": PYCLIENT_IMAGE}
    project = f"mbtest{uuid.uuid4().hex[:8]}"
    compose = ["docker-compose", "--project-name", project, "--file", str(DOCKER / "compose.yaml"),
               "--file", str(DOCKER / "compose.host.yaml")]

    def run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([*compose, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
        if check:
            assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
        return proc

    # docker-compose 1.29 refuses published ports on the host's network (Docker itself only discards
    # them), and an override cannot remove list items: the merged file, less its `ports`, is what runs.
    merged = without_published_ports(run("config").stdout)
    assert "network_mode: host" in merged and "ports:" not in merged
    (tmp_path / "compose.yaml").write_text(merged)
    compose = ["docker-compose", "--project-name", project, "--project-directory", str(DOCKER),
               "--file", str(tmp_path / "compose.yaml")]
    try:
        run("up", "--detach", "--no-build")     # the producer and consumer wait for the broker's health
        consumer = run("ps", "--quiet", "consumer").stdout.strip()
        producer = run("ps", "--quiet", "producer").stdout.strip()
        assert consumer and producer
        for cid in (producer, consumer):
            state = wait_for("exited", lambda c=cid: (s := inspect(c)["State"])["Status"] == "exited" and s, 180)
            assert state["ExitCode"] == 0, logs(cid)
        out = docker("logs", consumer).stdout.splitlines()
        assert out[-1] == "consume: read 3 records from orders"
        lines = (DOCKER / "examples" / "orders.txt").read_text().splitlines()
        expected = sorted(f"key={key} value={value}" for key, value in (line.split(":", 1) for line in lines))
        assert sorted(line.split(" ", 1)[1] for line in out[:-1]) == expected
        records = http_json(f"http://127.0.0.1:{ports['MB_HTTP_PORT']}/topics/orders/records", user=("alice", "alice-secret"))["records"]
        assert sorted(r["key"] for r in records) == ["order-1", "order-2", "order-3"]
        produced = http_json(f"http://127.0.0.1:{ports['MB_HTTP_PORT']}/requests?api_key=0", user=("alice", "alice-secret"))["requests"]
        assert {(r["principal"], r["listener"]) for r in produced} == {("User:alice", "SECURE")}  # kcat over SASL
        broker = run("ps", "--quiet", "mockbroker").stdout.strip()
        assert health(broker) == "healthy"
    finally:
        run("down", "--volumes", "--timeout", "10", check=False)


# -- clusters and security from the environment (issue #15, item 5) --------------------------------------


def test_mockbroker_brokers_3_serves_a_cluster_of_three_nodes_from_one_container() -> None:
    http = free_port()
    env = {"MOCKBROKER_HOST": "127.0.0.1", "MOCKBROKER_PORT": "0", "MOCKBROKER_BROKERS": "3",
           "MOCKBROKER_HTTP_HOST": "127.0.0.1", "MOCKBROKER_HTTP_PORT": str(http),
           "KAFKA_DEFAULT_REPLICATION_FACTOR": "3", "KAFKA_MIN_INSYNC_REPLICAS": "2"}
    with container(env) as cid:
        line = wait_for("listening", lambda: next((x for x in logs(cid).splitlines()
                                                   if x.startswith("mockbroker listening on")), None))
        addresses = [bound for bound, _ in listening_addresses(line)]
        assert len(addresses) == 3
        brokers = metadata_brokers(addresses[0])
        assert [(node, f"{host}:{port}") for node, host, port in brokers] == list(zip((1, 2, 3), addresses, strict=True))
        assert confluent_produce(",".join(addresses), "replicated", [b"before"]) == [(0, 0)]
        [partition] = http_json(f"http://127.0.0.1:{http}/topics/replicated")["partitions"]
        assert sorted(partition["replicas"]) == [1, 2, 3] and sorted(partition["isr"]) == [1, 2, 3]
        stopped = http_json(f"http://127.0.0.1:{http}/nodes/{partition['leader']}/stop", {})
        assert sum(not n["alive"] for n in stopped["nodes"]) == 1
        assert confluent_produce(",".join(addresses), "replicated", [b"after"]) == [(0, 1)]  # a new leader
        assert confluent_consume(",".join(addresses), "replicated", 2) == [b"before", b"after"]
        assert "Traceback" not in logs(cid)


def test_a_sasl_ssl_listener_from_the_kafka_environment_next_to_plaintext(tmp_path: Path) -> None:
    from confluent_kafka import Producer

    certs = tmp_path / "certs"
    certs.mkdir()
    certs.chmod(0o777)  # the image's user (uid 10001) writes the CA here
    plain, secured = free_port(), free_port()
    env = {"KAFKA_LISTENERS": f"PLAINTEXT://127.0.0.1:{plain},SASL_SSL://127.0.0.1:{secured}",
           "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL",
           "KAFKA_CLIENT_USERS": "alice", "KAFKA_CLIENT_PASSWORDS": "s3cret",
           "KAFKA_SASL_ENABLED_MECHANISMS": "SCRAM-SHA-512", "MOCKBROKER_SSL_CA_OUT": "/certs/ca.pem",
           "MOCKBROKER_HTTP_PORT": ""}
    with container(env, volumes=(f"{certs}:/certs",)) as cid:
        ca = certs / "ca.pem"
        wait_for("the CA written", lambda: ca.is_file() and ca.stat().st_size > 0)
        wait_for("listening", lambda: answers(f"127.0.0.1:{plain}"))
        conf = {"bootstrap.servers": f"127.0.0.1:{secured}", "security.protocol": "SASL_SSL",
                "ssl.ca.location": str(ca), "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "alice",
                "sasl.password": "s3cret"}
        producer = Producer(conf)
        producer.produce("vault", b"over SASL_SSL")
        assert producer.flush(30) == 0
        assert confluent_consume(f"127.0.0.1:{plain}", "vault", 1) == [b"over SASL_SSL"]
        failures: list[Any] = []
        wrong = Producer({**conf, "sasl.password": "wrong", "error_cb": failures.append})
        wrong.produce("vault", b"never")
        wait_for("the authentication error", lambda: wrong.poll(0.2) is not None and any(
            "Authentication" in str(e) for e in failures))
        assert "Traceback" not in logs(cid)


def test_the_sasl_compose_stack_logs_in_with_the_jaas_file_users_and_scram_credentials(tmp_path: Path) -> None:
    """docker/compose.sasl.yaml (apache/kafka's SASL environment: a JAAS file through KAFKA_OPTS, a SCRAM user
    in --add-scram form) with a host-network override written here: the kcat producer logs in with PLAIN,
    the Python consumer with SCRAM-SHA-256, both exit 0, and the broker saw both principals."""
    port, controller, http = free_port(), free_port(), free_port()
    override = tmp_path / "compose.sasl.host.yaml"
    override.write_text(f"""services:
  mockbroker:
    image: "{IMAGE}"
    network_mode: host
    environment:
      KAFKA_LISTENERS: "SASL_PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller}"
      KAFKA_ADVERTISED_LISTENERS: "SASL_PLAINTEXT://127.0.0.1:{port}"
      KAFKA_CONTROLLER_QUORUM_VOTERS: "1@127.0.0.1:{controller}"
      MOCKBROKER_HTTP_HOST: "127.0.0.1"
      MOCKBROKER_HTTP_PORT: "{http}"
  producer:
    image: "{KCAT_IMAGE}"
    network_mode: host
    command: ["-b", "127.0.0.1:{port}", "-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanisms=PLAIN", "-X", "sasl.username=alice", "-X", "sasl.password=alice-secret", "-P", "-t", "orders", "-K", ":", "-l", "/examples/orders.txt"]
  consumer:
    image: "{PYCLIENT_IMAGE}"
    network_mode: host
    environment:
      BOOTSTRAP_SERVERS: "127.0.0.1:{port}"
    command: ["/examples/consume.py"]
""")
    project = f"mbtest{uuid.uuid4().hex[:8]}"
    compose = ["docker-compose", "--project-name", project, "--file", str(DOCKER / "compose.sasl.yaml"),
               "--file", str(override)]

    def run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([*compose, *args], cwd=REPO, capture_output=True, text=True, timeout=300)
        if check:
            assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
        return proc

    merged = without_published_ports(run("config").stdout)
    assert "network_mode: host" in merged and "ports:" not in merged and "kafka_server_jaas.conf" in merged
    (tmp_path / "compose.yaml").write_text(merged)
    compose = ["docker-compose", "--project-name", project, "--project-directory", str(DOCKER),
               "--file", str(tmp_path / "compose.yaml")]
    try:
        run("up", "--detach", "--no-build")
        consumer = run("ps", "--quiet", "consumer").stdout.strip()
        producer = run("ps", "--quiet", "producer").stdout.strip()
        assert consumer and producer
        for cid in (producer, consumer):
            state = wait_for("exited", lambda c=cid: (s := inspect(c)["State"])["Status"] == "exited" and s, 180)
            assert state["ExitCode"] == 0, logs(cid)
        assert docker("logs", consumer).stdout.splitlines()[-1] == "consume: read 3 records from orders"
        requests = http_json(f"http://127.0.0.1:{http}/requests", user=("alice", "alice-secret"))["requests"]
        principals = {r["principal"] for r in requests if r["api_key"] in (0, 1)}  # Produce, Fetch
        assert principals == {"User:alice", "User:bob"}
        broker = run("ps", "--quiet", "mockbroker").stdout.strip()
        assert health(broker) == "healthy" and "Traceback" not in logs(broker)
    finally:
        run("down", "--volumes", "--timeout", "10", check=False)
