"""mockbroker: a Kafka-compatible broker for tests, speaking the real wire protocol.

    from mockbroker import MockBroker

    async with MockBroker(port=0) as broker:              # asyncio
        ...
    with MockBroker(port=0).run_in_thread() as broker:    # sync code
        ...

The names below are imported on first use, so `mockbroker healthcheck` (run by Docker every few
seconds) does not pay for loading the broker.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mockbroker.clock import Clock
    from mockbroker.errors import KafkaError
    from mockbroker.inspection import BatchInfo, RecordInfo
    from mockbroker.protocol.errors import ErrorCode
    from mockbroker.server import MockBroker

__all__ = ["MockBroker", "Clock", "KafkaError", "ErrorCode", "RecordInfo", "BatchInfo"]
__version__ = "0.1.0"

_LAZY = {
    "MockBroker": "mockbroker.server",
    "Clock": "mockbroker.clock",
    "KafkaError": "mockbroker.errors",
    "ErrorCode": "mockbroker.protocol.errors",
    "RecordInfo": "mockbroker.inspection",
    "BatchInfo": "mockbroker.inspection",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mockbroker' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
