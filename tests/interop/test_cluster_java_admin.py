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


def test_java_admin_elects_leaders_reassigns_partitions_and_describes_log_dirs(mockbroker: MockBroker) -> None:
    mockbroker.create_topic("e", assignments=[[1, 2, 3], [2, 3, 1]])
    mockbroker.create_topic("m", assignments=[[1]])
    mockbroker.move_leader("e", 0, 3)
    mockbroker.cluster.config.set("mockbroker.reassignment.ms", 3_600_000)
    elected, unclean, moving, listed, cancel, dirs = admin(
        mockbroker,
        {"op": "electLeaders", "type": "preferred",
         "partitions": [{"topic": "e", "partition": 0}, {"topic": "e", "partition": 1},
                        {"topic": "e", "partition": 5}]},
        {"op": "electLeaders", "type": "unclean", "partitions": [{"topic": "e", "partition": 0}]},
        {"op": "alterPartitionReassignments", "reassignments": [
            {"topic": "e", "partition": 1, "replicas": [1, 3]}, {"topic": "m", "partition": 0, "replicas": [2, 3]},
            {"topic": "e", "partition": 0, "replicas": None}]},
        {"op": "listPartitionReassignments"},
        {"op": "alterPartitionReassignments", "reassignments": [{"topic": "m", "partition": 0, "replicas": None}]},
        {"op": "describeLogDirs", "brokers": [1, 2, 3]},
    )
    assert elected["partitions"]["e-0"] == "ok"
    assert elected["partitions"]["e-1"]["error"] == "ElectionNotNeededException"
    assert elected["partitions"]["e-5"]["error"] == "UnknownTopicOrPartitionException"
    assert unclean["partitions"]["e-0"]["error"] == "ElectionNotNeededException"
    assert mockbroker.partition_state("e", 0).leader == 1
    # e-1 only drops a replica: done at once; m-0 adds two: pending until the broker clock gets there.
    assert (moving["partitions"]["e-1"], moving["partitions"]["m-0"]) == ("ok", "ok")
    assert moving["partitions"]["e-0"]["error"] == "NoReassignmentInProgressException"
    assert mockbroker.partition_state("e", 1).replicas == [1, 3]
    assert listed["reassignments"] == {"m-0": {"replicas": [2, 3, 1], "adding": [2, 3], "removing": [1]}}
    assert cancel["partitions"]["m-0"] == "ok"
    assert mockbroker.partition_state("m", 0).replicas == [1]
    for node_id, expected in (("1", {"e-0", "e-1", "m-0"}), ("2", {"e-0"}), ("3", {"e-0", "e-1"})):
        [(path, info)] = dirs["brokers"][node_id].items()
        assert (path, info["total_bytes"], info["usable_bytes"]) == ("/tmp/kafka-logs", None, None)
        assert set(info["replicas"]) == expected
        assert all(r["offset_lag"] == 0 and r["future"] is False for r in info["replicas"].values())
