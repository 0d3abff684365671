"""What Kafka keeps in its metadata log (`__cluster_metadata`), as one JSON file under the data dir.

`<data dir>/mockbroker-metadata.json`, rewritten atomically when a topic is created or deleted, gets
partitions, has its configs changed, when a new block of producer ids is entered, and when a dynamic
broker config, a SCRAM credential, an ACL binding or a client quota changes (cluster_settings.py reads and writes those):

    {"version": 1, "cluster_id": "...", "next_producer_id": 2000,
     "topics": [{"name": "t", "topic_id": "<base64 uuid>", "configs": {"cleanup.policy": "compact"},
                 "partitions": [{"replicas": [1], "leader_epoch": 0}]}],
     "broker_configs": {"": {"log.retention.ms": "1000"}, "1": {...}},      (Kafka's ConfigRecords)
     "scram_credentials": [{"name": "alice", "mechanism": "SCRAM-SHA-256", "salt": "<base64>",
                            "stored_key": "<base64>", "server_key": "<base64>", "iterations": 4096}],
     "acls": [{"resource_type": "TOPIC", "resource_name": "t", "pattern_type": "LITERAL",
               "principal": "User:bob", "host": "*", "operation": "READ", "permission": "DENY"}],
     "client_quotas": [{"entity": {"user": "alice", "client-id": null}, "values": {"producer_byte_rate": 1024.0}}],
     "group_configs": {"billing": {"share.auto.offset.reset": "earliest"}}}

The last four are optional (a file written before they were kept loads without them). Group and
transaction coordinator state is in __consumer_offsets / __transaction_state, as Kafka keeps it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from mockbroker import bounded_json
from mockbroker.storage.layout import kafka_uuid, parse_kafka_uuid

FILE_NAME = "mockbroker-metadata.json"
VERSION = 1


@dataclass
class TopicRecord:
    name: str
    topic_id: str  # Kafka's base64 form
    configs: dict[str, str]
    replicas: list[list[int]]
    leader_epochs: list[int]


@dataclass
class ClusterMetadata:
    cluster_id: str | None = None
    next_producer_id: int = 0
    topics: list[TopicRecord] = field(default_factory=list)
    # As JSON holds them; cluster_settings.py turns them into the broker's objects and back.
    broker_configs: dict[str, dict[str, str]] = field(default_factory=dict)
    scram_credentials: list[dict[str, Any]] = field(default_factory=list)
    acls: list[dict[str, str]] = field(default_factory=list)
    client_quotas: list[dict[str, Any]] = field(default_factory=list)  # Kafka's ClientQuotaRecords (null: default)
    group_configs: dict[str, dict[str, str]] = field(default_factory=dict)  # ConfigRecords of GROUP resources


def encode(meta: ClusterMetadata) -> bytes:
    doc: dict[str, Any] = {
        "version": VERSION,
        "cluster_id": meta.cluster_id,
        "next_producer_id": meta.next_producer_id,
        "topics": [{"name": t.name, "topic_id": t.topic_id, "configs": t.configs,
                    "partitions": [{"replicas": r, "leader_epoch": e} for r, e in zip(t.replicas, t.leader_epochs,
                                                                                       strict=True)]}
                   for t in meta.topics],
        "broker_configs": meta.broker_configs,
        "scram_credentials": meta.scram_credentials,
        "acls": meta.acls,
        "client_quotas": meta.client_quotas,
        "group_configs": meta.group_configs,
    }
    return (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode()


def decode(text: str) -> ClusterMetadata:
    """The file's content; ValueError (or KeyError / TypeError for a wrong shape) when it does not parse. Its
    nesting is bounded (bounded_json): the file nests 4 levels, a deeper one is not ours."""
    doc = bounded_json.loads(text, max_depth=32)
    if not isinstance(doc, dict):
        raise ValueError("not a JSON object")
    if doc.get("version") != VERSION:
        raise ValueError(f"{FILE_NAME}: unknown version {doc.get('version')!r}")
    topics = []
    for t in doc.get("topics", []):
        parts = t["partitions"]
        parse_kafka_uuid(t["topic_id"])
        topics.append(TopicRecord(t["name"], t["topic_id"], {str(k): str(v) for k, v in t["configs"].items()},
                                  [list(p["replicas"]) for p in parts], [int(p["leader_epoch"]) for p in parts]))
    broker_configs = {str(name): {str(k): str(v) for k, v in configs.items()}
                      for name, configs in doc.get("broker_configs", {}).items()}
    scram = [dict(c) for c in doc.get("scram_credentials", [])]
    acls = [{str(k): str(v) for k, v in b.items()} for b in doc.get("acls", [])]
    quotas = [dict(q) for q in doc.get("client_quotas", [])]
    groups = {str(g): {str(k): str(v) for k, v in configs.items()} for g, configs in doc.get("group_configs", {}).items()}
    return ClusterMetadata(doc.get("cluster_id"), int(doc.get("next_producer_id", 0)), topics, broker_configs,
                           scram, acls, quotas, groups)


__all__ = ["FILE_NAME", "ClusterMetadata", "TopicRecord", "decode", "encode", "kafka_uuid"]
