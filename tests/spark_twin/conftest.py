"""Fixtures of the Spark twin tier (tests/spark_twin/twin.py has the client).

- `spark_calls`: the running SparkCalls JVM (session scope), restarted if a request killed it.
- `twin`: a SparkTwin for a fresh `mockbroker`: read(**options), stream(**options) -> TwinStream
  (trigger(), available_now(), stop()), write(rows, **options), produce(), txn(), admin(); the
  options are spark_kafka_options(broker, ...), the helper the PySpark tests use too.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mockbroker import MockBroker
from tests.spark_twin.twin import SparkCallsProcess, SparkTwin


@pytest.fixture(scope="session")
def spark_calls() -> Iterator[SparkCallsProcess]:
    process = SparkCallsProcess()
    try:
        yield process
    finally:
        process.close()


@pytest.fixture
def twin(spark_calls: SparkCallsProcess, mockbroker: MockBroker) -> Iterator[SparkTwin]:
    t = SparkTwin(spark_calls, mockbroker)
    try:
        yield t
    finally:
        t.close()


