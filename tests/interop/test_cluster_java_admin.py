"""The Java AdminClient (kafka-clients 4.3.0) on a 3-node cluster with racks: replication factors and
their errors, describeTopics (DescribeTopicPartitions) and describeCluster before and after a node stops."""

from __future__ import annotations

import pytest

from mockbroker.server import MockBroker
from tests.interop.test_java_admin import admin, by_name

pytestmark = [pytest.mark.interop, pytest.mark.java, pytest.mark.mockbroker(brokers=3, racks=["a", "b", "c"])]


def test_java_admin_sees_replicas_isr_and_nodes_of_a_cluster_through_a_node_stop(mockbroker: MockBroker) -> None:
    created, described, cluster = admin(
        mockbroker,
        {"op": "createTopics", "topics": [{"name": "r3", "partitions": 3, "replication_factor": 3},
                                          {"name": "r4", "partitions": 1, "replication_factor": 4}]},
        {"op": "describeTopics", "topics": ["r3"]},
        {"op": "describeCluster"},
    )
    results = by_name(created["topics"])
    assert (results["r3"]["ok"], results["r3"]["replication_factor"]) == (True, 3)
    assert results["r4"]["error"] == "InvalidReplicationFactorException"
    parts = by_name(described["topics"])["r3"]["partitions"]
    assert all(sorted(p["replicas"]) == [1, 2, 3] and p["isr"] == p["replicas"] and p["leader"] == p["replicas"][0]
               for p in parts)
    assert sorted(p["leader"] for p in parts) == [1, 2, 3]
    assert [(n["id"], n["rack"]) for n in cluster["nodes"]] == [(1, "a"), (2, "b"), (3, "c")]

    mockbroker.stop_node(1)
    described, cluster = admin(mockbroker, {"op": "describeTopics", "topics": ["r3"]}, {"op": "describeCluster"})
    for p in by_name(described["topics"])["r3"]["partitions"]:
        assert p["leader"] in (2, 3) and 1 not in p["isr"] and sorted(p["replicas"]) == [1, 2, 3]
    assert [n["id"] for n in cluster["nodes"]] == [2, 3]
    assert cluster["controller"]["id"] == 2
