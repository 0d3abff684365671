"""mockbroker: a Kafka-compatible broker for tests, speaking the real wire protocol.

    from mockbroker import MockBroker

    async with MockBroker(port=0) as broker:              # asyncio
        ...
    with MockBroker(port=0).run_in_thread() as broker:    # sync code
        ...
"""

from mockbroker.clock import Clock
from mockbroker.errors import KafkaError
from mockbroker.inspection import BatchInfo, RecordInfo
from mockbroker.server import MockBroker
from protocol.errors import ErrorCode

__all__ = ["MockBroker", "Clock", "KafkaError", "ErrorCode", "RecordInfo", "BatchInfo"]
__version__ = "0.1.0"
