"""mockbroker.testing.spark: the options a Spark test gets for a broker, and how the connector is found."""

from __future__ import annotations

from pathlib import Path

import pytest

from mockbroker import MockBroker
from mockbroker.testing import spark as spark_testing
from mockbroker.testing.spark import connector_conf, connector_jars, spark_kafka_options


def test_spark_kafka_options_name_the_broker_and_stringify_values(mockbroker: MockBroker) -> None:
    options = spark_kafka_options(mockbroker, subscribe="t", includeHeaders=True, maxOffsetsPerTrigger=10)

    assert options["kafka.bootstrap.servers"] == mockbroker.bootstrap_servers
    assert (options["subscribe"], options["includeHeaders"], options["maxOffsetsPerTrigger"]) == ("t", "true", "10")
    assert options["kafkaConsumer.pollTimeoutMs"] == "10000"
    assert spark_kafka_options("h:1", **{"kafkaConsumer.pollTimeoutMs": "5"})["kafkaConsumer.pollTimeoutMs"] == "5"
    # Nothing Spark rejects: no auto.offset.reset, deserializers, enable.auto.commit or group.id.
    assert not {k for k in options if k.startswith("kafka.") and k != "kafka.bootstrap.servers"}


def test_connector_jars_take_files_and_directories(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    for name in ("b.jar", "a.jar", "notes.txt"):
        (tmp_path / "lib" / name).write_text("")
    single = tmp_path / "spark-sql-kafka.jar"
    single.write_text("")

    jars = connector_jars(f"{single},{tmp_path / 'lib'}")

    assert [Path(j).name for j in jars] == ["spark-sql-kafka.jar", "a.jar", "b.jar"]
    assert connector_jars("") == []
    with pytest.raises(FileNotFoundError, match="MOCKBROKER_SPARK_JARS"):
        connector_jars(str(tmp_path / "missing.jar"))


def test_connector_conf_prefers_jars_then_maven_then_says_why_not(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    jars = [tmp_path / name for name in ("spark-sql-kafka-0-10_2.13-4.3.0.jar",
                                         "spark-token-provider-kafka-0-10_2.13-4.3.0.jar",
                                         "kafka-clients-4.3.0.jar", "commons-pool2-2.12.1.jar")]
    for jar in jars:
        jar.write_text("")
    monkeypatch.setattr(spark_testing, "pyspark_version", lambda: "4.1.0")
    monkeypatch.setenv(spark_testing.JARS_ENV, str(tmp_path))  # a folder holding all four
    assert connector_conf() == {"spark.jars": ",".join(sorted(str(j.resolve()) for j in jars))}
    monkeypatch.setenv(spark_testing.JARS_ENV, ",".join(map(str, jars)))  # or a list
    assert connector_conf() == {"spark.jars": ",".join(str(j.resolve()) for j in jars)}

    monkeypatch.delenv(spark_testing.JARS_ENV)
    monkeypatch.setattr(spark_testing, "maven_central_reachable", lambda: True)
    assert connector_conf() == {"spark.jars.packages": "org.apache.spark:spark-sql-kafka-0-10_2.13:4.1.0"}

    monkeypatch.setattr(spark_testing, "maven_central_reachable", lambda: False)
    with pytest.raises(RuntimeError) as why:
        connector_conf()
    assert "\n" not in str(why.value) and "MOCKBROKER_SPARK_JARS" in str(why.value)
    assert spark_testing.spark_unavailable() == str(why.value) or spark_testing.pyspark_version() is None


def test_spark_unavailable_without_pyspark(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spark_testing, "pyspark_version", lambda: None)
    reason = spark_testing.spark_unavailable()
    assert reason is not None and "PySpark is not installed" in reason


@pytest.mark.parametrize("gone", ["spark-sql-kafka-0-10_2.13-", "spark-token-provider-kafka-0-10_2.13-",
                                  "kafka-clients-", "commons-pool2-"])
def test_a_missing_connector_jar_is_named_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     gone: str) -> None:
    names = ["spark-sql-kafka-0-10_2.13-4.3.0.jar", "spark-token-provider-kafka-0-10_2.13-4.3.0.jar",
             "kafka-clients-4.3.0.jar", "commons-pool2-2.12.1.jar"]
    for name in names:
        if not name.startswith(gone):
            (tmp_path / name).write_text("")
    monkeypatch.setenv(spark_testing.JARS_ENV, str(tmp_path))
    monkeypatch.setattr(spark_testing, "pyspark_version", lambda: "4.3.0")
    with pytest.raises(RuntimeError) as why:
        connector_conf()
    message = str(why.value)
    assert "\n" not in message and f"has no {gone}*.jar" in message
    assert spark_testing.spark_unavailable() == message  # what a Spark test's skip or failure says
