"""PySpark's Kafka source and sink against mockbroker (tests marked spark and slow).

They need PySpark 4 (pip install -e '.[spark]'), Java 17+ and Spark's Kafka connector, found through
MOCKBROKER_SPARK_JARS or, where Maven Central answers, spark.jars.packages (mockbroker.testing.spark).
Without them every test module is skipped when it imports tests/spark/helpers.py, which pytest -ra
reports as one line saying how to enable them (MOCKBROKER_REQUIRE_SPARK=1 turns that into failures). tests/spark_twin/ covers the same ground with kafka-clients alone.

Fixtures: `spark` (one local session for the run), `spark_options` (spark_kafka_options for this
test's broker, plus keyword options), `stop_queries` (stops the streaming queries a test leaves).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from mockbroker import MockBroker
from mockbroker.testing.spark import REQUIRE_ENV, spark_kafka_options, spark_session, spark_unavailable

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

# Test-only session settings: drop cached Kafka producers and consumers of finished tests soon.
TEST_SESSION_CONF = {
    "spark.kafka.producer.cache.timeout": "5s",
    "spark.kafka.producer.cache.evictorThreadRunInterval": "2s",
    "spark.kafka.consumer.cache.timeout": "5s",
    "spark.kafka.consumer.cache.evictorThreadRunInterval": "2s",
}


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    reason = spark_unavailable()
    if reason is not None:  # (without MOCKBROKER_REQUIRE_SPARK=1, tests/spark/helpers.py skipped already)
        pytest.fail(f"{reason} [{REQUIRE_ENV}=1]", pytrace=False)
    session = spark_session("mockbroker-spark-tests", conf=TEST_SESSION_CONF)
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        for query in session.streams.active:
            query.stop()
        session.stop()


@pytest.fixture
def spark_options(mockbroker: MockBroker) -> Callable[..., dict[str, str]]:
    """spark_kafka_options(mockbroker, **options)."""

    def options(**kwargs: Any) -> dict[str, str]:
        return spark_kafka_options(mockbroker, **kwargs)

    return options


@pytest.fixture
def stop_queries(spark: SparkSession) -> Iterator[None]:
    yield
    for query in spark.streams.active:
        query.stop()
