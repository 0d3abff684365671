"""Names and small files of Kafka's log directory layout.

    <log dir>/meta.properties                      version=1, cluster.id, node.id, directory.id
    <log dir>/recovery-point-offset-checkpoint     (checkpoints.py) and the other checkpoint files
    <log dir>/<topic>-<partition>/
        partition.metadata                         version: 0 / topic_id: <base64 uuid>
        00000000000000000000.log                   the batches, byte for byte, named by base offset
        00000000000000000000.index / .timeindex    sparse offset index, time index (indexes.py)
        00000000000000000042.snapshot              producer state at offset 42 (producer_snapshot.py)
        00000000000000000000.txnindex              aborted transactions (txn_index.py)
        leader-epoch-checkpoint                    (checkpoints.py)

Files being replaced carry Kafka's suffixes: `.deleted` (a segment on its way out), `.cleaned` (the
cleaner's output, incomplete), `.swap` (cleaned and complete, about to replace the originals).
"""

from __future__ import annotations

import base64
import os
import uuid
from pathlib import Path

LOG = ".log"
INDEX = ".index"
TIME_INDEX = ".timeindex"
TXN_INDEX = ".txnindex"
SNAPSHOT = ".snapshot"
DELETED = ".deleted"
CLEANED = ".cleaned"
SWAP = ".swap"
SEGMENT_SUFFIXES = (LOG, INDEX, TIME_INDEX, TXN_INDEX)
META_PROPERTIES = "meta.properties"
PARTITION_METADATA = "partition.metadata"
LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
CLEAN_SHUTDOWN = ".kafka_cleanshutdown"
LOCK = ".lock"


def file_name(offset: int, suffix: str) -> str:
    """Kafka's LogFileUtils.filenamePrefixFromOffset: the offset on 20 digits, then the suffix."""
    return f"{offset:020d}{suffix}"


def offset_of(name: str) -> int | None:
    """The offset a segment, index or snapshot file is named by (None for other names)."""
    prefix = name.split(".", 1)[0]
    return int(prefix) if len(prefix) == 20 and prefix.isdigit() else None


def partition_dir_name(topic: str, partition: int) -> str:
    return f"{topic}-{partition}"


def parse_partition_dir(name: str) -> tuple[str, int] | None:
    """(topic, partition) of a partition directory name; None for anything else (a `-delete` directory,
    the root files)."""
    topic, sep, index = name.rpartition("-")
    if not sep or not topic or not index.isdigit():
        return None
    return topic, int(index)


def kafka_uuid(value: uuid.UUID) -> str:
    """Kafka's Uuid.toString: URL-safe base64 of the 16 bytes, without padding."""
    return base64.urlsafe_b64encode(value.bytes).decode().rstrip("=")


def parse_kafka_uuid(text: str) -> uuid.UUID:
    return uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))


def write_atomically(path: Path, data: bytes, *, sync: bool = True) -> None:
    """Write `path.tmp`, fsync it, rename over `path`, as Kafka's checkpoint files are written: a crash
    leaves the old file or the new one, never half of one."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    if sync:
        sync_dir(path.parent)


def sync_dir(path: Path) -> None:
    """fsync a directory, so a rename in it is durable."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# -- meta.properties (KRaft's MetaProperties, version 1) ---------------------------------------------


def encode_meta_properties(cluster_id: str, node_id: int, directory_id: str) -> bytes:
    """As java.util.Properties.store writes them: a comment line, then key=value lines."""
    lines = ["#", "#Written by mockbroker", f"cluster.id={cluster_id}", f"directory.id={directory_id}",
             f"node.id={node_id}", "version=1"]
    return ("\n".join(lines) + "\n").encode()


def decode_properties(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#!":
            continue
        key, _, value = line.partition("=")
        out[key.strip()] = value.strip()
    return out


# -- partition.metadata (PartitionMetadataFile, version 0) -------------------------------------------


def encode_partition_metadata(topic_id: uuid.UUID) -> bytes:
    return f"version: 0\ntopic_id: {kafka_uuid(topic_id)}\n".encode()


def decode_partition_metadata(text: str) -> uuid.UUID:
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields[key.strip()] = value.strip()
    if fields.get("version") != "0" or "topic_id" not in fields:
        raise ValueError(f"unrecognised partition.metadata: {text!r}")
    return parse_kafka_uuid(fields["topic_id"])
