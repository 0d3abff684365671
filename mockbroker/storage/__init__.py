"""Optional persistence in Kafka's own on-disk layout (MockBroker(data_dir=...), `--data-dir`, log.dirs).

Without a data dir nothing here runs and nothing touches the disk. With one, each partition's log is kept
in Kafka's files as the broker appends, rolls, deletes and cleans (state/log/storage_hooks.py is the interface
the model calls), and a new broker on the same directory recovers every topic, record and offset:
- layout.py: file and directory names, meta.properties, partition.metadata, atomic writes;
- checkpoints.py: the offset checkpoint files and leader-epoch-checkpoint;
- indexes.py: the sparse offset index and the time index;
- producer_snapshot.py: ProducerStateManager's `.snapshot` files; txn_index.py: `.txnindex` files;
- segment_files.py: the active segment's open files;
- partition_store.py: one partition's files (the LogSink);
- recovery.py: loading a partition directory after a clean stop or a crash;
- metadata.py: topics, ids and configs (Kafka's metadata log, here one JSON file);
- broker_storage.py: the data dir of a broker (its log directories, checkpoints, the ClusterStore).

Only this package's opening is imported by a broker without a data dir (data_dir_from_config); the rest
is imported when a data dir is given, so memory mode pays nothing for it at start-up.
"""

from __future__ import annotations

import logging

log = logging.getLogger("mockbroker.storage")


class DataDirError(RuntimeError):
    """The data dir cannot be used (locked by another broker, another cluster's, not writable). Here, in the
    package's opening, so the CLI can catch it without importing the storage modules in memory mode."""


def data_dir_from_config(config: dict[str, object]) -> str | None:
    """The data dir Kafka's log.dirs (else log.dir) names: the first of a comma-separated list."""
    for key in ("log.dirs", "log.dir"):
        value = config.get(key)
        if value:
            dirs = [d.strip() for d in str(value).split(",") if d.strip()]
            if len(dirs) > 1:
                log.warning("%s names %d directories; mockbroker keeps its data in the first, %s", key, len(dirs),
                            dirs[0])
            if dirs:
                return dirs[0]
    return None
