"""The Java AdminClient (kafka-clients 4.3.0, through the harness's `admin` command) against mockbroker:
topic lifecycle, describeTopics (DescribeTopicPartitions), describeCluster, configs, partitions, records.

Each test is one JVM run with several operations; one output line per operation, in order.
"""

from __future__ import annotations

from typing import Any

import pytest

from mockbroker.protocol.errors import ErrorCode
from mockbroker.protocol.records.builder import build_batch
from mockbroker.server import MockBroker
from tests.interop.clients import of_type, run_java
from tests.rawclient import RawClient

pytestmark = [pytest.mark.interop, pytest.mark.java]

DESCRIBE_TOPIC_PARTITIONS = 75


def admin(broker: MockBroker, *ops: dict[str, Any]) -> list[dict[str, Any]]:
    lines = run_java("admin", {"bootstrap": broker.bootstrap_servers, "ops": list(ops), "timeout_ms": 15000},
                     timeout=90)
    results = [line for line in lines if line.get("type") in ("result", "error")]
    assert [r["op"] for r in results] == [op["op"] for op in ops], lines
    assert of_type(lines, "error") == [], lines
    return results


def by_name(entries: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in entries}


def test_java_admin_creates_lists_describes_and_deletes_topics(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("existing", 2)
    created, listed, described, deleted, listed_after = admin(
        mockbroker,
        {"op": "createTopics", "topics": [
            {"name": "orders", "partitions": 3, "configs": {"cleanup.policy": "compact"}},
            {"name": "existing"},
            {"name": "bad-config", "configs": {"retention.ms": "soon"}},
        ]},
        {"op": "listTopics"},
        {"op": "describeTopics", "topics": ["orders", "existing", "missing"]},
        {"op": "deleteTopics", "topics": ["orders", "missing"]},
        {"op": "listTopics"},
    )
    results = by_name(created["topics"])
    assert (results["orders"]["ok"], results["orders"]["partitions"], results["orders"]["replication_factor"]) == (
        True, 3, 1)
    assert results["existing"]["error"] == "TopicExistsException"
    assert results["existing"]["message"] == "Topic 'existing' already exists."
    assert results["bad-config"]["error"] == "InvalidConfigurationException"
    assert listed["names"] == ["existing", "orders"]

    topics = by_name(described["topics"])
    assert [p["partition"] for p in topics["orders"]["partitions"]] == [0, 1, 2]
    assert topics["orders"]["partitions"][0] == {"partition": 0, "leader": 1, "replicas": [1], "isr": [1], "elr": []}
    assert topics["existing"]["internal"] is False
    assert topics["missing"]["error"] == "UnknownTopicOrPartitionException"
    assert mockbroker.received(DESCRIBE_TOPIC_PARTITIONS), "describeTopics should use DescribeTopicPartitions"

    outcome = by_name(deleted["topics"])
    assert outcome["orders"]["ok"] is True
    assert outcome["missing"]["error"] == "UnknownTopicOrPartitionException"
    assert listed_after["names"] == ["existing"]


@pytest.mark.mockbroker(config={"log.cleanup.policy": "compact"})
def test_java_admin_describes_cluster_and_configs(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("cfg", config={"retention.ms": "1000"})
    cluster, before, altered, after = admin(
        mockbroker,
        {"op": "describeCluster"},
        {"op": "describeConfigs", "topics": ["cfg"], "brokers": ["1"],
         "names": ["retention.ms", "cleanup.policy", "segment.bytes", "num.partitions", "log.cleanup.policy"]},
        {"op": "incrementalAlterConfigs", "topic": "cfg", "set": {"segment.ms": "60000"}, "delete": ["retention.ms"]},
        {"op": "describeConfigs", "topics": ["cfg"], "names": ["retention.ms", "segment.ms"]},
    )
    assert cluster["cluster_id"] == mockbroker.cluster.cluster_id
    assert cluster["nodes"] == [{"id": 1, "host": mockbroker.host, "port": mockbroker.port, "rack": None}]
    assert cluster["controller"]["id"] == 1

    topic_cfg, broker_cfg = before["resources"]
    assert topic_cfg["configs"]["retention.ms"] == {"value": "1000", "source": "DYNAMIC_TOPIC_CONFIG",
                                                    "read_only": False, "sensitive": False}
    assert topic_cfg["configs"]["cleanup.policy"]["value"] == "compact"
    assert topic_cfg["configs"]["cleanup.policy"]["source"] == "STATIC_BROKER_CONFIG"
    assert topic_cfg["configs"]["segment.bytes"]["source"] == "DEFAULT_CONFIG"
    assert broker_cfg["configs"]["num.partitions"] == {"value": "1", "source": "DEFAULT_CONFIG", "read_only": True,
                                                       "sensitive": False}
    assert broker_cfg["configs"]["log.cleanup.policy"]["source"] == "STATIC_BROKER_CONFIG"

    assert altered["resources"] == [{"type": "topic", "name": "cfg", "ok": True}]
    configs = after["resources"][0]["configs"]
    assert (configs["segment.ms"]["value"], configs["segment.ms"]["source"]) == ("60000", "DYNAMIC_TOPIC_CONFIG")
    assert (configs["retention.ms"]["value"], configs["retention.ms"]["source"]) == ("604800000", "DEFAULT_CONFIG")


def test_java_admin_grows_partitions_and_deletes_records(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("grow", 1)
    with RawClient(mockbroker.host, mockbroker.port) as c:
        body = {"transactional_id": None, "acks": -1, "timeout_ms": 5000, "topic_data": [
            {"name": "grow", "partition_data": [{"index": 0, "records": bytes(build_batch([(b"k", b"v")] * 5))}]}]}
        [p] = c.request(0, 9, body).responses[0].partition_responses
        assert p.error_code == ErrorCode.NONE
    grown, described, deleted, earliest = admin(
        mockbroker,
        {"op": "createPartitions", "topic": "grow", "count": 3},
        {"op": "describeTopics", "topics": ["grow"]},
        {"op": "deleteRecords", "topic": "grow", "offsets": {"0": 3}},
        {"op": "listOffsets", "topic": "grow", "partitions": [0], "spec": "earliest"},
    )
    assert grown["ok"] is True
    assert len(described["topics"][0]["partitions"]) == 3
    assert deleted["partitions"] == [{"topic": "grow", "partition": 0, "low_watermark": 3}]
    assert earliest["offsets"][0]["offset"] == 3
