"""Record batches: v2 batches as byte views (batch), building them (builder), the codecs
(compression) and the magic 0/1 message sets of Kafka before 0.11 (legacy).

Sans-IO like the rest of `protocol`: bytes in, objects out, and back.
"""

from .batch import (
    LOG_OVERHEAD,
    RECORD_BATCH_OVERHEAD,
    Codec,
    ControlRecord,
    ControlType,
    CorruptRecordError,
    InvalidRecordError,
    Record,
    RecordBatch,
    iter_batches,
    magic_of,
)
from .builder import RecordInput, build_batch, build_control_batch, rebuild_batch
from .compression import compress, decompress
from .legacy import (
    LegacyMessage,
    build_message_set,
    convert_from_v2,
    convert_to_v2,
    parse_message_set,
)

__all__ = [
    "LOG_OVERHEAD",
    "RECORD_BATCH_OVERHEAD",
    "Codec",
    "ControlRecord",
    "ControlType",
    "CorruptRecordError",
    "InvalidRecordError",
    "LegacyMessage",
    "Record",
    "RecordBatch",
    "RecordInput",
    "build_batch",
    "build_control_batch",
    "build_message_set",
    "compress",
    "convert_from_v2",
    "convert_to_v2",
    "decompress",
    "iter_batches",
    "magic_of",
    "parse_message_set",
    "rebuild_batch",
]
