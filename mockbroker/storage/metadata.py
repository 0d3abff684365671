"""What Kafka keeps in its metadata log (`__cluster_metadata`), as one JSON file under the data dir.

`<data dir>/mockbroker-metadata.json`, rewritten atomically when a topic is created or deleted, gets
partitions, has its configs changed, or when a new block of producer ids is entered:

    {"version": 1, "cluster_id": "...", "next_producer_id": 2000,
     "topics": [{"name": "t", "topic_id": "<base64 uuid>", "configs": {"cleanup.policy": "compact"},
                 "partitions": [{"replicas": [1], "leader_epoch": 0}]}]}

Not kept (yet): dynamic broker configs, SCRAM users, ACLs, group and transaction coordinator state.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

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


def encode(meta: ClusterMetadata) -> bytes:
    doc: dict[str, Any] = {
        "version": VERSION,
        "cluster_id": meta.cluster_id,
        "next_producer_id": meta.next_producer_id,
        "topics": [{"name": t.name, "topic_id": t.topic_id, "configs": t.configs,
                    "partitions": [{"replicas": r, "leader_epoch": e} for r, e in zip(t.replicas, t.leader_epochs,
                                                                                       strict=True)]}
                   for t in meta.topics],
    }
    return (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode()


def decode(text: str) -> ClusterMetadata:
    doc = json.loads(text)
    if doc.get("version") != VERSION:
        raise ValueError(f"{FILE_NAME}: unknown version {doc.get('version')!r}")
    topics = []
    for t in doc.get("topics", []):
        parts = t["partitions"]
        parse_kafka_uuid(t["topic_id"])
        topics.append(TopicRecord(t["name"], t["topic_id"], {str(k): str(v) for k, v in t["configs"].items()},
                                  [list(p["replicas"]) for p in parts], [int(p["leader_epoch"]) for p in parts]))
    return ClusterMetadata(doc.get("cluster_id"), int(doc.get("next_producer_id", 0)), topics)


__all__ = ["FILE_NAME", "ClusterMetadata", "TopicRecord", "decode", "encode", "kafka_uuid"]
