"""What the PySpark tests share: records in (confluent-kafka), rows out, streaming queries collected.

Rows come back as tests.spark_twin.twin.Row, the tuple the Java twin reports too, so a PySpark test
and its twin assert on the same shapes.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import pytest

from mockbroker.testing.spark import REQUIRE_ENV, spark_unavailable

UNAVAILABLE = spark_unavailable()
if UNAVAILABLE is not None and os.environ.get(REQUIRE_ENV) != "1":
    # Raised at the same line for every test module importing this: pytest -ra folds it into one line.
    # (A skip in a fixture is reported once per test; a conftest cannot skip when named on the command line.)
    pytest.skip(UNAVAILABLE, allow_module_level=True)

from confluent_kafka import KafkaException, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewPartitions  # noqa: E402

from mockbroker import MockBroker  # noqa: E402
from tests.spark_twin.twin import Row  # noqa: E402

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import DataStreamWriter, StreamingQuery

TIMEOUT = 120.0  # bound on any wait for Spark (its first micro-batch compiles code)


def kafka_rows(df: DataFrame) -> list[Row]:
    """The rows of a Kafka source DataFrame, sorted by (topic, partition, offset); timestamps in ms."""
    columns = ["topic", "partition", "offset", "key", "value", "unix_millis(timestamp) AS timestamp",
               "timestampType"]
    with_headers = "headers" in df.columns
    if with_headers:
        columns.append("headers")
    out = []
    for r in df.selectExpr(*columns).collect():
        headers = None
        if with_headers and r["headers"] is not None:
            headers = tuple((h["key"], None if h["value"] is None else bytes(h["value"])) for h in r["headers"])
        out.append(Row(r["topic"], r["partition"], r["offset"], None if r["key"] is None else bytes(r["key"]),
                       None if r["value"] is None else bytes(r["value"]), r["timestamp"], r["timestampType"],
                       headers))
    return sorted(out)


def produce(broker: MockBroker, topic: str, records: Iterable[dict[str, Any]], **config: Any) -> None:
    """Send records {value, key?, partition?, timestamp?, headers?: [(k, v)]} with one new producer."""
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "linger.ms": 0, **config})
    errors: list[Any] = []

    def delivered(err: Any, _msg: Any) -> None:
        if err is not None:
            errors.append(err)

    for r in records:
        kwargs: dict[str, Any] = {k: r[k] for k in ("key", "partition", "timestamp", "headers") if k in r}
        producer.produce(topic, value=r.get("value"), on_delivery=delivered, **kwargs)
    assert producer.flush(30) == 0, "records not delivered in 30 s"
    assert errors == [], errors


def transactional_producer(broker: MockBroker, transactional_id: str) -> Producer:
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "transactional.id": transactional_id,
                         "linger.ms": 0})
    producer.init_transactions(30)
    return producer


def transaction(producer: Producer, topic: str, values: list[str], end: str | None) -> None:
    """One transaction of `values`; end "commit", "abort", or None to leave it open."""
    producer.begin_transaction()
    for v in values:
        producer.produce(topic, value=v)
    assert producer.flush(30) == 0
    if end == "commit":
        producer.commit_transaction(30)
    elif end == "abort":
        producer.abort_transaction(30)


def admin(broker: MockBroker) -> AdminClient:
    return AdminClient({"bootstrap.servers": broker.bootstrap_servers})


def delete_records(broker: MockBroker, topic: str, partition: int, before: int) -> int:
    """DeleteRecords (through librdkafka's Admin API); returns the new low watermark."""
    client = admin(broker)  # kept referenced until the futures resolve (else librdkafka destroys it)
    futures = client.delete_records([TopicPartition(topic, partition, before)], request_timeout=30)
    result = next(iter(futures.values())).result(30)
    return int(result.low_watermark)


def create_partitions(broker: MockBroker, topic: str, count: int) -> None:
    client = admin(broker)
    futures = client.create_partitions([NewPartitions(topic, count)], request_timeout=30)
    for future in futures.values():
        try:
            future.result(30)
        except KafkaException as exc:  # pragma: no cover - reported as the test failure
            raise AssertionError(f"create_partitions {topic} -> {count}: {exc}") from exc


def wait_for(predicate: Callable[[], bool], what: str, timeout: float = TIMEOUT,
             query: StreamingQuery | None = None) -> None:
    """Poll `predicate` until it holds (bounded); a failed query ends the wait with its error."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if query is not None and query.exception() is not None:
            raise AssertionError(f"the query failed while waiting for {what}: {query.exception()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(0.1)


class BatchCollector:
    """A foreachBatch sink keeping each micro-batch's rows (as Row) by batch id."""

    def __init__(self) -> None:
        self.batches: dict[int, list[Row]] = {}
        self._lock = threading.Lock()

    def __call__(self, df: DataFrame, batch_id: int) -> None:
        rows = kafka_rows(df)
        with self._lock:
            self.batches[batch_id] = rows

    @property
    def rows(self) -> list[Row]:
        with self._lock:
            return sorted(r for rows in self.batches.values() for r in rows)

    def nonempty_batches(self) -> int:
        with self._lock:
            return sum(1 for rows in self.batches.values() if rows)


def run_available_now(writer: DataStreamWriter, timeout: float = TIMEOUT) -> StreamingQuery:
    """Start a query with Trigger.AvailableNow and wait (bounded) for it to finish; its error raised."""
    query = writer.trigger(availableNow=True).start()
    finished = query.awaitTermination(int(timeout))
    if not finished:
        query.stop()
        raise AssertionError(f"the AvailableNow query did not finish in {timeout:.0f}s")
    return query


def read_stream(spark: SparkSession, options: dict[str, str]) -> DataFrame:
    return spark.readStream.format("kafka").options(**options).load()
