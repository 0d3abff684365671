"""Kafka's checkpoint files (CheckpointFile): a version line, a count line, then one entry per line.

Offset checkpoints at the root of a log directory, version 0, entries `topic partition offset`:
recovery-point-offset-checkpoint (flushed up to here: recovery scans from it), log-start-offset-checkpoint,
replication-offset-checkpoint (the high watermark), cleaner-offset-checkpoint (the cleaner's first dirty
offset). leader-epoch-checkpoint in each partition directory, version 0, entries `epoch startOffset`.
Written whole, atomically (layout.write_atomically).
"""

from __future__ import annotations

RECOVERY_POINT = "recovery-point-offset-checkpoint"
LOG_START = "log-start-offset-checkpoint"
REPLICATION = "replication-offset-checkpoint"
CLEANER = "cleaner-offset-checkpoint"
OFFSET_CHECKPOINTS = (RECOVERY_POINT, LOG_START, REPLICATION, CLEANER)


def _encode(entries: list[str]) -> bytes:
    return ("\n".join(["0", str(len(entries)), *entries]) + "\n").encode()


def _decode(text: str, fields: int, what: str) -> list[list[str]]:
    lines = text.splitlines()
    if len(lines) < 2 or lines[0].strip() != "0":
        raise ValueError(f"{what}: unrecognised version line")
    count = int(lines[1])
    entries = [line.split() for line in lines[2:] if line.strip()]
    if len(entries) != count or any(len(e) != fields for e in entries):
        raise ValueError(f"{what}: expected {count} entries of {fields} fields")
    return entries


def encode_offsets(offsets: dict[tuple[str, int], int]) -> bytes:
    return _encode([f"{t} {p} {o}" for (t, p), o in sorted(offsets.items())])


def decode_offsets(text: str, what: str = "checkpoint") -> dict[tuple[str, int], int]:
    return {(t, int(p)): int(o) for t, p, o in _decode(text, 3, what)}


def encode_epochs(epochs: list[tuple[int, int]]) -> bytes:
    return _encode([f"{e} {start}" for e, start in epochs])


def decode_epochs(text: str) -> list[tuple[int, int]]:
    return [(int(e), int(s)) for e, s in _decode(text, 2, "leader-epoch-checkpoint")]
