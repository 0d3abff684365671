"""A broker's data dir: its log directories, their checkpoint files, the cluster metadata (the ClusterStore).

- One broker (brokers=1): the data dir is the log directory (Kafka's log.dirs), with meta.properties and
  the checkpoint files at its root and a directory per partition.
- A cluster in one process (brokers=N): one log directory per node, `<data dir>/node-<id>/`, each with
  its own meta.properties and checkpoints. This broker keeps one log per partition (not one per replica),
  so a partition's directory is in the log directory of its first replica (its preferred leader) only.
- `<data dir>/mockbroker-metadata.json` (metadata.py): topics, ids, configs, the producer id block, and
  (cluster_settings.py) dynamic broker configs, SCRAM credentials and ACL bindings.
- The data dir is locked (`<data dir>/.lock`, dir_lock.py) before anything in it is read, whatever the
  node count; with brokers=N each `node-<id>/` is locked too. Each log directory gets `.kafka_cleanshutdown`
  when the broker stops cleanly; without it the next start checks every batch past the recovery point.

`open_storage` is called by MockBroker before it serves anything: it loads what the data dir holds into the
cluster (recovery.py), then attaches itself (Cluster.storage, PartitionLog.sink) so that every later change
reaches the files.
"""

from __future__ import annotations

import logging
import os
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from mockbroker.errors import KafkaError
from mockbroker.state.log.cleaner import aborted_transactions
from mockbroker.storage import DataDirError, metadata
from mockbroker.storage.checkpoints import (
    CLEANER,
    LOG_START,
    OFFSET_CHECKPOINTS,
    RECOVERY_POINT,
    REPLICATION,
    decode_offsets,
    encode_offsets,
)
from mockbroker.storage.cluster_settings import StoredSettings
from mockbroker.storage.dir_lock import DirLock
from mockbroker.storage.layout import (
    CLEAN_SHUTDOWN,
    LOG,
    META_PROPERTIES,
    PARTITION_METADATA,
    decode_partition_metadata,
    decode_properties,
    encode_meta_properties,
    encode_partition_metadata,
    file_name,
    kafka_uuid,
    parse_kafka_uuid,
    parse_partition_dir,
    partition_dir_name,
    write_atomically,
)
from mockbroker.storage.partition_store import PartitionStore, index_interval
from mockbroker.storage.recovery import ALLOW_MISSING_SEGMENTS, recover_partition

if TYPE_CHECKING:
    from mockbroker.security import BrokerSecurity
    from mockbroker.state.cluster.cluster import Cluster, Partition, Topic
    from mockbroker.state.log.aborted_index import AbortedIndex
    from mockbroker.state.log.partition_log import PartitionLog

log = logging.getLogger("mockbroker.storage")


def read_meta_properties(path: Path) -> dict[str, str]:
    """A log directory's meta.properties; DataDirError naming it when it is not one (not text, no node.id
    nor cluster.id, a node.id that is not a number)."""
    try:
        props = decode_properties(path.read_text())
    except ValueError as exc:  # UnicodeDecodeError: not text
        raise DataDirError(f"{path} is not a meta.properties file ({exc}): fix or remove it") from None
    if "node.id" not in props and "cluster.id" not in props:
        raise DataDirError(f"{path} is not a meta.properties file (it has neither node.id nor cluster.id): fix "
                           "or remove it")
    if "node.id" in props and not props["node.id"].lstrip("-").isdigit():
        raise DataDirError(f"{path} has node.id={props['node.id'][:40]!r}, not a number: fix or remove it")
    return props


class LogDirectory:
    """One Kafka log directory: meta.properties, the checkpoint files, the partition directories."""

    def __init__(self, path: Path, node_id: int, *, locked_by_data_dir: bool = False) -> None:
        self.path = path
        self.node_id = node_id
        self.partitions: dict[tuple[str, int], tuple[PartitionStore, PartitionLog]] = {}
        # The data dir's own lock covers a log directory that is the data dir (brokers=1).
        self._lock = None if locked_by_data_dir else DirLock(path)
        self.clean_shutdown = False

    def open(self, cluster_id: str, cluster_id_given: bool) -> str:
        """Create or check the directory; the cluster id it belongs to."""
        self.path.mkdir(parents=True, exist_ok=True)
        if self._lock is not None:
            self._lock.acquire()
        meta_path = self.path / META_PROPERTIES
        if meta_path.exists():
            props = read_meta_properties(meta_path)
            stored_cluster = props.get("cluster.id", cluster_id)
            if props.get("node.id") not in (None, str(self.node_id)):
                raise DataDirError(f"{meta_path} belongs to node {props.get('node.id')}, not node {self.node_id}")
            if cluster_id_given and stored_cluster != cluster_id:
                raise DataDirError(f"{meta_path} belongs to cluster {stored_cluster}, not {cluster_id} (Kafka's "
                                   "InconsistentClusterIdException)")
            cluster_id = stored_cluster
        else:
            write_atomically(meta_path, encode_meta_properties(cluster_id, self.node_id, kafka_uuid(uuid.uuid4())))
        marker = self.path / CLEAN_SHUTDOWN
        self.clean_shutdown = marker.exists()
        if self.clean_shutdown:
            marker.unlink()
        return cluster_id

    def read_checkpoint(self, name: str) -> dict[tuple[str, int], int]:
        path = self.path / name
        if not path.exists():
            return {}
        try:
            return decode_offsets(path.read_text(), name)
        except ValueError:
            log.warning("%s does not parse: ignored", path)
            return {}

    def write_checkpoint(self, name: str) -> None:
        offsets: dict[tuple[str, int], int] = {}
        for key, (store, plog) in self.partitions.items():
            if name == RECOVERY_POINT:
                offsets[key] = store.recovery_point
            elif name == LOG_START:
                offsets[key] = plog.log_start_offset
            elif name == REPLICATION:
                offsets[key] = plog.high_watermark
            elif name == CLEANER and plog.segments.cleaner_checkpoint is not None:
                offsets[key] = plog.segments.cleaner_checkpoint
        write_atomically(self.path / name, encode_offsets(offsets))

    def write_all_checkpoints(self) -> None:
        for name in OFFSET_CHECKPOINTS:
            self.write_checkpoint(name)

    def close(self, clean: bool) -> None:
        if clean:
            write_atomically(self.path / CLEAN_SHUTDOWN, b"")
        if self._lock is not None:
            self._lock.release()


class BrokerStorage:
    """The data dir of one MockBroker (the ClusterStore the cluster calls)."""

    def __init__(self, data_dir: Path, cluster: Cluster, node_ids: list[int],
                 aborted_index: Callable[[], AbortedIndex] | None = None,
                 security: BrokerSecurity | None = None) -> None:
        self.data_dir = data_dir
        self.cluster = cluster
        self.aborted_index = aborted_index
        self.settings = StoredSettings(cluster.config, security, node_ids[0], cluster.quotas)
        self.lock = DirLock(data_dir)  # the whole data dir's, taken first (dir_lock.py)
        if len(node_ids) == 1:
            self.dirs = {node_ids[0]: LogDirectory(data_dir, node_ids[0], locked_by_data_dir=True)}
        else:
            self.dirs = {n: LogDirectory(data_dir / f"node-{n}", n) for n in node_ids}
        self.closed = False

    # -- where things are ------------------------------------------------------------------------
    def log_dir_of(self, partition: Partition) -> LogDirectory:
        home = partition.replicas[0] if partition.replicas else min(self.dirs)
        return self.dirs.get(home) or self.dirs[min(self.dirs)]

    def _metadata(self) -> metadata.ClusterMetadata:
        topics = [metadata.TopicRecord(t.name, kafka_uuid(t.topic_id), t.config.overrides(),
                                       [list(p.replicas) for p in t.partitions],
                                       [p.leader_epoch for p in t.partitions])
                  for t in self.cluster.topics.values()]
        meta = metadata.ClusterMetadata(self.cluster.cluster_id, self.cluster.producer_id_block_end, topics)
        self.settings.fill(meta)
        return meta

    # -- opening ---------------------------------------------------------------------------------
    def open(self, cluster_id_given: bool) -> None:
        """Lock and check every log directory, load the topics and their logs, then attach."""
        try:
            self.lock.acquire()  # before anything is read: a second broker on this data dir stops here
            cluster_id = self.cluster.cluster_id
            meta = self._read_metadata()
            if meta is not None and meta.cluster_id and not cluster_id_given:
                cluster_id = meta.cluster_id
            for d in self.dirs.values():
                cluster_id = d.open(cluster_id, cluster_id_given or meta is not None)
        except OSError as exc:
            self.close(clean=False)
            raise DataDirError(f"cannot use the data dir {self.data_dir}: {exc}") from exc
        except DataDirError:
            self.close(clean=False)
            raise
        self.cluster.cluster_id = cluster_id
        if meta is not None:
            self.cluster.skip_producer_ids_below(meta.next_producer_id)
        try:
            self._load(meta or metadata.ClusterMetadata(), has_metadata=meta is not None)
        except DataDirError:  # a partition recovery refuses (a missing segment): the data dir stays as it is
            self.close(clean=False)
            raise
        self.settings.load(meta or metadata.ClusterMetadata(), log.warning)
        self.settings.attach(lambda: self._guarded(self.metadata_changed))
        self.cluster.storage = self
        for topic in self.cluster.topics.values():
            for p in topic.partitions:
                if p.log.sink is None:
                    self.partition_created(p)
        for d in self.dirs.values():
            self._guarded(d.write_all_checkpoints)
        self._guarded(self.metadata_changed)

    def _read_metadata(self) -> metadata.ClusterMetadata | None:
        """mockbroker-metadata.json, None when there is none; DataDirError naming it when it does not parse."""
        path = self.data_dir / metadata.FILE_NAME
        if not path.exists():
            return None
        try:
            return metadata.decode(path.read_text())
        except (ValueError, KeyError, TypeError, AttributeError) as exc:  # bounded_json: no RecursionError
            raise DataDirError(f"{path} does not parse ({str(exc)[:200]}): fix or remove it (the partition "
                               "directories are then loaded with default configs)") from None

    def _load(self, meta: metadata.ClusterMetadata, *, has_metadata: bool) -> None:
        now = self.cluster.clock.now_ms()
        known = {(t.name, i) for t in meta.topics for i in range(len(t.replicas))}
        for record in meta.topics + self._discover(known, has_metadata):
            topic = self._create_topic(record)
            for p in topic.partitions:
                epoch = record.leader_epochs[p.index] if p.index < len(record.leader_epochs) else 0
                self._load_partition(p, epoch, now)

    def _discover(self, known: set[tuple[str, int]], has_metadata: bool) -> list[metadata.TopicRecord]:
        """Partition directories the metadata file does not name. With no metadata file (a log directory
        Kafka wrote, or a lost file) they are loaded as topics with the broker's default configs and the ids
        of their partition.metadata. With one, they are strays (a topic whose creation did not finish, a
        deletion that did): renamed `-stray` and left alone, as Kafka does. Directories of deleted topics
        (`-delete`) are removed; Kafka's own metadata log (`__cluster_metadata-0`) is not a topic."""
        found: dict[str, dict[int, int]] = {}
        ids: dict[str, str] = {}
        for node, d in self.dirs.items():
            for entry in sorted(d.path.iterdir()) if d.path.is_dir() else []:
                if entry.is_dir() and entry.name.endswith("-delete"):
                    shutil.rmtree(entry, ignore_errors=True)
                    continue
                parsed = parse_partition_dir(entry.name)
                if parsed is None or not entry.is_dir() or parsed in known or parsed[0] == "__cluster_metadata":
                    continue
                if has_metadata:
                    stray = entry.with_name(f"{entry.name}.{uuid.uuid4().hex}-stray")
                    log.warning("%s is not a partition of %s: renamed %s", entry, metadata.FILE_NAME, stray.name)
                    os.replace(entry, stray)
                    continue
                topic, index = parsed
                found.setdefault(topic, {})[index] = node
                try:
                    ids.setdefault(topic, kafka_uuid(decode_partition_metadata(
                        (entry / PARTITION_METADATA).read_text())))
                except (OSError, ValueError):
                    pass
        out = []
        for topic, parts in sorted(found.items()):
            log.warning("%s holds topic %s, which %s does not name: loaded with the default configs", self.data_dir,
                        topic, metadata.FILE_NAME)
            count = max(parts) + 1
            out.append(metadata.TopicRecord(topic, ids.get(topic) or kafka_uuid(uuid.uuid4()), {},
                                            [[parts.get(i, min(self.dirs))] for i in range(count)], [0] * count))
        return out

    def _create_topic(self, record: metadata.TopicRecord) -> Topic:
        topic_id = parse_kafka_uuid(record.topic_id)
        try:
            topic = self.cluster.create_topic(record.name, -1, -1, dict(record.configs), topic_id=topic_id,
                                              assignments=list(enumerate(record.replicas)))
        except KafkaError:  # the nodes changed since: placed again, same count
            topic = self.cluster.create_topic(record.name, len(record.replicas), -1, dict(record.configs),
                                              topic_id=topic_id)
        assert topic is not None
        return topic

    def _load_partition(self, p: Partition, epoch: int, now_ms: int) -> None:
        try:
            self._recover(p, epoch, now_ms)
        except OSError as exc:  # this partition's files cannot be read: it starts empty, offline for writes
            d = self.log_dir_of(p)
            store = PartitionStore(d.path / partition_dir_name(p.topic.name, p.index), p.log, d.write_checkpoint)
            d.partitions[(p.topic.name, p.index)] = (store, p.log)
            p.log.sink = store
            store.fail(exc)

    def _recover(self, p: Partition, epoch: int, now_ms: int) -> None:
        d = self.log_dir_of(p)
        key = (p.topic.name, p.index)
        path = d.path / partition_dir_name(*key)
        if not path.is_dir():
            return  # made empty by partition_created
        meta_file = path / PARTITION_METADATA
        if meta_file.exists():
            try:
                stored_id = decode_partition_metadata(meta_file.read_text())
            except ValueError:
                stored_id = p.topic.topic_id
            if stored_id != p.topic.topic_id:
                log.warning("%s holds topic id %s, not %s: loaded anyway", path, stored_id, p.topic.topic_id)
        store = PartitionStore(path, p.log, d.write_checkpoint)
        recovery_point = d.read_checkpoint(RECOVERY_POINT).get(key, 0)
        cleaner = d.read_checkpoint(CLEANER).get(key)
        report = recover_partition(path, p.log, recovery_point=recovery_point,
                                   log_start=d.read_checkpoint(LOG_START).get(key), cleaner_checkpoint=cleaner,
                                   leader_epoch=epoch, now_ms=now_ms, index_interval=index_interval(p.log),
                                   clean=d.clean_shutdown, contiguous=not p.topic.config.compacted and cleaner is None,
                                   allow_missing=bool(self.cluster.config.get(ALLOW_MISSING_SEGMENTS)))
        for warning in report.warnings:
            log.warning("recovery of %s-%d: %s", key[0], key[1], warning)
        # What the checkpoints say the log held (the high watermark: acknowledged; the recovery point:
        # flushed). A log that now ends below it lost those records, whatever the files look like (a
        # segment cut short after a clean stop is not checked, so only this notices it).
        held = max(d.read_checkpoint(REPLICATION).get(key, 0), recovery_point)
        if p.log.log_end_offset < held:
            last = p.log.segments.segments[-1].base_offset if p.log.segments.segments else 0
            log.warning("recovery of %s-%d: the log ends at offset %d (%s), below the offset %d its checkpoints "
                        "recorded (high watermark / recovery point): offsets %d to %d are lost", key[0], key[1],
                        p.log.log_end_offset, path / file_name(last, LOG), held, p.log.log_end_offset, held - 1)
        store.recovery_point = p.log.log_end_offset if report.truncated_bytes == 0 else recovery_point
        store.epochs_written = list(p.log.epoch_starts)
        d.partitions[key] = (store, p.log)
        p.log.sink = store
        if self.aborted_index is not None:
            self.aborted_index().replace(p.log, aborted_transactions(p.log))

    # -- ClusterStore ----------------------------------------------------------------------------
    def partition_created(self, partition: Partition) -> None:
        d = self.log_dir_of(partition)
        key = (partition.topic.name, partition.index)
        path = d.path / partition_dir_name(*key)
        store = PartitionStore(path, partition.log, d.write_checkpoint)
        d.partitions[key] = (store, partition.log)
        partition.log.sink = store
        try:
            path.mkdir(exist_ok=True)
            write_atomically(path / PARTITION_METADATA, encode_partition_metadata(partition.topic.topic_id))
            base = partition.log.segments.active.base_offset
            if not (path / file_name(base, LOG)).exists():
                store.open_active(partition.log, base)  # Kafka creates the first segment with the partition
                assert store.active is not None
                store.active.close(inactive=False)
                store.active = None
        except OSError as exc:
            store.fail(exc)

    def topic_deleted(self, topic: Topic) -> None:
        """The metadata first (a crash after it leaves stray directories, not a resurrected topic), then the
        directories: renamed `-delete` and removed."""
        self._guarded(self.metadata_changed)
        for p in topic.partitions:
            d = self.log_dir_of(p)
            entry = d.partitions.pop((topic.name, p.index), None)
            if entry is None:
                continue
            store = entry[0]
            if store.active is not None:
                store.active.close(inactive=False)
                store.active = None
            store.failed = store.failed or "deleted"
            doomed = store.directory.with_name(f"{store.directory.name}.{topic.topic_id.hex}-delete")
            try:
                if store.directory.exists():
                    os.replace(store.directory, doomed)
                    shutil.rmtree(doomed, ignore_errors=True)
            except OSError as exc:
                log.error("cannot delete %s: %s", store.directory, exc)
        for d in self.dirs.values():
            self._guarded(d.write_all_checkpoints)

    def metadata_changed(self) -> None:
        if self.closed:
            return
        write_atomically(self.data_dir / metadata.FILE_NAME, metadata.encode(self._metadata()))

    def _guarded(self, work: Callable[[], None]) -> None:
        try:
            work()
        except OSError as exc:
            log.error("cannot write to the data dir %s: %s", self.data_dir, exc)

    # -- stopping --------------------------------------------------------------------------------
    def close(self, clean: bool = True) -> None:
        """A clean stop: every active segment closed, producer snapshots, checkpoints, the metadata, and the
        clean shutdown marker. Idempotent."""
        if self.closed:
            return
        if clean:
            for d in self.dirs.values():
                for store, _ in d.partitions.values():
                    store.close()
                self._guarded(d.write_all_checkpoints)
            self._guarded(self.metadata_changed)
        self.closed = True
        self.settings.attach(None)
        for d in self.dirs.values():
            try:
                d.close(clean and all(s.failed is None for s, _ in d.partitions.values()))
            except OSError as exc:
                log.error("cannot close %s: %s", d.path, exc)
        self.lock.release()
        if self.cluster.storage is self:
            self.cluster.storage = None
            for t in self.cluster.topics.values():
                for p in t.partitions:
                    p.log.sink = None


def open_storage(data_dir: str | os.PathLike[str], cluster: Cluster, node_ids: list[int], *,
                 cluster_id_given: bool, aborted_index: Callable[[], AbortedIndex] | None = None,
                 security: BrokerSecurity | None = None) -> BrokerStorage:
    """Open (create, lock, load) a data dir for the cluster, with the users and ACLs of `security`; raises
    DataDirError when it cannot be used."""
    storage = BrokerStorage(Path(data_dir), cluster, node_ids, aborted_index, security)
    storage.open(cluster_id_given)
    return storage
