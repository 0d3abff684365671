"""Spark's Kafka source and sink over SASL_SSL with SCRAM, configured through `kafka.*` options as a data
engineer configures them for a secured Kafka (the JAAS line, a PEM trust store with the broker's CA)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from mockbroker import MockBroker
from tests.spark.helpers import BatchCollector, read_stream, run_available_now

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

# serial: a Spark session is a JVM of ~1 GB per worker and a minute to start on a busy machine, and the
# first batch read of a session came back empty under contention (seen with -n 2 and beside a loaded
# machine); scripts/test runs the Spark tier alone, in one session, after the workers.
pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.serial, pytest.mark.usefixtures("stop_queries")]

Options = Callable[..., dict[str, str]]


def scram_options(broker: MockBroker, user: str, password: str) -> dict[str, str]:
    assert broker.tls is not None and broker.tls.ca_file is not None
    return {
        "kafka.security.protocol": "SASL_SSL",
        "kafka.sasl.mechanism": "SCRAM-SHA-512",
        "kafka.sasl.jaas.config": ("org.apache.kafka.common.security.scram.ScramLoginModule required "
                                   f'username="{user}" password="{password}";'),
        "kafka.ssl.truststore.type": "PEM",
        "kafka.ssl.truststore.location": str(broker.tls.ca_file),
    }


@pytest.mark.mockbroker(security="SASL_SSL", users={"etl": "s3cret"})
def test_sink_and_source_over_sasl_ssl_with_scram(spark: SparkSession, mockbroker: MockBroker,
                                                  spark_options: Options, tmp_path: Path) -> None:
    mockbroker.create_topic("secured", partitions=2)
    secured = scram_options(mockbroker, "etl", "s3cret")
    rows = [(f"k{i}", f"v{i}") for i in range(8)]

    spark.createDataFrame(rows, "key STRING, value STRING").write.format("kafka").options(
        **spark_options(topic="secured", **secured)).save()
    collector = BatchCollector()
    run_available_now(read_stream(spark, spark_options(subscribe="secured", startingOffsets="earliest", **secured))
                      .writeStream.foreachBatch(collector).option("checkpointLocation", str(tmp_path / "c")))

    assert sorted((r.key, r.value) for r in collector.rows) == sorted((k.encode(), v.encode()) for k, v in rows)
    principals = {r.principal for r in mockbroker.received() if r.api_key in (0, 1)}  # Produce and Fetch
    assert principals == {"User:etl"}


@pytest.mark.mockbroker(security="SASL_SSL", users={"etl": "s3cret"})
def test_a_wrong_password_fails_the_spark_write_with_an_authentication_error(
        spark: SparkSession, mockbroker: MockBroker, spark_options: Options) -> None:
    mockbroker.create_topic("secured")
    options = spark_options(topic="secured", **scram_options(mockbroker, "etl", "wrong"),
                            **{"kafka.max.block.ms": "10000"})

    with pytest.raises(Exception, match="SaslAuthenticationException|Authentication failed"):
        spark.createDataFrame([("v",)], "value STRING").write.format("kafka").options(**options).save()
    assert mockbroker.records("secured") == []
