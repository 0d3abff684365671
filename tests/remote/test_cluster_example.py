"""The compose example for running the suite against Apache Kafka or Redpanda (examples/remote_cluster/): both
profiles advertise the address its README gives to `--kafka-bootstrap`, with the one-node settings a test
cluster needs. No image is pulled here (no registry is reachable): this checks the file, not the cluster."""

from __future__ import annotations

from pathlib import Path

import yaml

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "remote_cluster"


def test_each_profile_serves_the_bootstrap_the_readme_names() -> None:
    compose = yaml.safe_load((EXAMPLE / "compose.yaml").read_text())
    readme = (EXAMPLE / "README.md").read_text()
    assert "pytest --kafka-bootstrap localhost:9092" in readme
    kafka, redpanda = compose["services"]["kafka"], compose["services"]["redpanda"]
    assert kafka["profiles"] == ["kafka"] and redpanda["profiles"] == ["redpanda"]
    for service in (kafka, redpanda):
        assert "9092:9092" in service["ports"]
    env = kafka["environment"]
    assert env["KAFKA_ADVERTISED_LISTENERS"] == "PLAINTEXT://localhost:9092"
    assert all(env[name] == "1" for name in env if name.endswith(("REPLICATION_FACTOR", "MIN_ISR")))
    assert "--advertise-kafka-addr=PLAINTEXT://localhost:9092" in redpanda["command"]
