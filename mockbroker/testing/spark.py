"""Spark Structured Streaming against mockbroker: Kafka options, the connector jars, a local session.

    from mockbroker.testing.spark import spark_kafka_options, spark_session

    spark = spark_session()                      # local[2], loopback only, the Kafka connector on it
    df = (spark.read.format("kafka")
          .options(**spark_kafka_options(broker, subscribe="events", startingOffsets="earliest"))
          .load())

Spark's Kafka source and sink live in a separate artifact, spark-sql-kafka-0-10_2.13 (plus
kafka-clients, commons-pool2 and spark-token-provider-kafka), that PySpark does not ship. The session
finds it, in this order:

1. MOCKBROKER_SPARK_JARS: jar paths, or directories of jars (a folder holding all four, or several
   folders), separated by os.pathsep or commas (e.g. "spark-sql-kafka-0-10_2.13-4.3.0.jar:
   spark-token-provider-kafka-0-10_2.13-4.3.0.jar:kafka-clients-4.3.0.jar:commons-pool2-2.12.1.jar"),
   passed as spark.jars; all four must be there (a missing one is named). scripts/test sets it to the
   connector in ../shared/spark-connector plus the two jars tools/interop_deps.py caches;
2. spark.jars.packages org.apache.spark:spark-sql-kafka-0-10_2.13:<pyspark version>, when Maven
   Central answers a short probe (Spark's Ivy then downloads it and its dependencies once).

spark_unavailable() says in one line why neither works (None when one does); tests skip on it.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import socket
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

    from mockbroker.server import MockBroker

JARS_ENV = "MOCKBROKER_SPARK_JARS"
REQUIRE_ENV = "MOCKBROKER_REQUIRE_SPARK"
MAVEN_CENTRAL = ("repo1.maven.org", 443)
SCALA_BINARY = "2.13"

# What a Spark test against a local broker wants besides the bootstrap address:
# - kafkaConsumer.pollTimeoutMs: how long an executor's poll may wait. Spark's default is
#   spark.network.timeout (120 s); a poll that only meets invisible data (transaction markers,
#   aborted records) waits all of it, and a broken broker would stall a test that long.
# - fetchOffset.retryIntervalMs: the pause between the driver's offset-fetch attempts (default 1 s).
DEFAULT_SOURCE_OPTIONS: dict[str, str] = {
    "kafkaConsumer.pollTimeoutMs": "10000",
    "fetchOffset.retryIntervalMs": "100",
}

# A local session for tests: loopback only, no UI, few shuffle partitions, UTC windows.
DEFAULT_SESSION_CONF: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.streaming.forceDeleteTempCheckpointLocation": "true",
    "spark.sql.adaptive.enabled": "false",
}


def spark_kafka_options(broker: MockBroker | str, **options: Any) -> dict[str, str]:
    """The options Spark's Kafka source and sink need for `broker` (a MockBroker or "host:port").

    kafka.bootstrap.servers plus DEFAULT_SOURCE_OPTIONS; keyword arguments add or override options
    (values become strings: startingOffsets="earliest", failOnDataLoss=False, includeHeaders=True).
    The sink uses the "kafka."-options and ignores the source-only ones, so one dict serves both.
    """
    bootstrap = broker if isinstance(broker, str) else broker.bootstrap_servers
    out = {"kafka.bootstrap.servers": bootstrap, **DEFAULT_SOURCE_OPTIONS}
    for key, value in options.items():
        out[key] = str(value).lower() if isinstance(value, bool) else str(value)
    return out


def pyspark_version() -> str | None:
    """The installed PySpark's version, without importing it (None when it is not installed)."""
    if importlib.util.find_spec("pyspark") is None:
        return None
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pyspark")
    except PackageNotFoundError:  # pragma: no cover - an unusual install
        return None


def connector_package(spark_version: str | None = None) -> str:
    """The Maven coordinates of the connector for a Spark version (default: the installed PySpark's)."""
    ver = spark_version or pyspark_version()
    if not ver:
        raise RuntimeError("PySpark is not installed (pip install 'mockbroker[spark]')")
    return f"org.apache.spark:spark-sql-kafka-0-10_{SCALA_BINARY}:{ver}"


def connector_jars(value: str | None = None) -> list[str]:
    """The jars named by MOCKBROKER_SPARK_JARS (or `value`): files, or directories of *.jar.

    Raises FileNotFoundError for an entry that does not exist; [] when the variable is unset.
    """
    text = os.environ.get(JARS_ENV, "") if value is None else value
    jars: list[str] = []
    for entry in text.replace(",", os.pathsep).split(os.pathsep):
        entry = entry.strip()
        if not entry:
            continue
        path = Path(entry).expanduser()
        if path.is_dir():
            jars.extend(str(p.resolve()) for p in sorted(path.glob("*.jar")))
        elif path.is_file():
            jars.append(str(path.resolve()))
        else:
            raise FileNotFoundError(f"{JARS_ENV} names {entry}, which does not exist")
    return jars


@functools.cache
def maven_central_reachable(timeout: float = 3.0) -> bool:
    """Whether a TCP connection to Maven Central opens within `timeout` seconds (DNS included)."""
    result: list[bool] = []

    def probe() -> None:
        try:
            with socket.create_connection(MAVEN_CENTRAL, timeout=timeout):
                result.append(True)
        except OSError:
            result.append(False)

    thread = threading.Thread(target=probe, name="maven-probe", daemon=True)
    thread.start()
    thread.join(timeout + 0.5)
    return bool(result and result[0])


# What the connector needs on Spark's class path, by file name: the source/sink, its token provider, the
# Kafka client and the pool its consumer cache uses.
REQUIRED_JARS: dict[str, str] = {
    f"spark-sql-kafka-0-10_{SCALA_BINARY}-": "Spark's Kafka source and sink",
    f"spark-token-provider-kafka-0-10_{SCALA_BINARY}-": "its token provider",
    "kafka-clients-": "the Kafka client",
    "commons-pool2-": "Apache Commons Pool 2",
}


def missing_connector_jars(jars: list[str]) -> list[str]:
    """"<prefix>*.jar (<what it is>)" for each required jar not among `jars` (matched by file name)."""
    names = [Path(j).name for j in jars]
    return [f"{prefix}*.jar ({what})" for prefix, what in REQUIRED_JARS.items()
            if not any(n.startswith(prefix) and n.endswith(".jar") for n in names)]


def connector_conf() -> dict[str, str]:
    """spark.jars (from MOCKBROKER_SPARK_JARS) or spark.jars.packages (Maven Central reachable).

    Raises RuntimeError with the one-line reason when neither is possible, or when MOCKBROKER_SPARK_JARS
    lacks one of the four jars the connector needs (named in the message).
    """
    jars = connector_jars()
    if jars:
        missing = missing_connector_jars(jars)
        if missing:
            raise RuntimeError(f"{JARS_ENV} has no {' and no '.join(missing)}: Spark's Kafka connector needs "
                               f"all of {', '.join(p + '*.jar' for p in REQUIRED_JARS)}")
        return {"spark.jars": ",".join(jars)}
    if maven_central_reachable():
        return {"spark.jars.packages": connector_package()}
    raise RuntimeError(
        f"Spark's Kafka connector is not available: set {JARS_ENV} to the jars of "
        f"spark-sql-kafka-0-10_{SCALA_BINARY}-{pyspark_version() or '<pyspark version>'}, kafka-clients, "
        f"commons-pool2 and spark-token-provider-kafka-0-10 (os.pathsep-separated), or make Maven Central "
        f"reachable for spark.jars.packages"
    )


def spark_unavailable() -> str | None:
    """None when a Spark session with the Kafka connector can start here, else why not (one line)."""
    if pyspark_version() is None:
        return "PySpark is not installed (pip install -e '.[spark]' or pip install 'pyspark>=4.0,<5')"
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "java not found (PySpark 4 needs Java 17 or 21 on PATH or JAVA_HOME)"
    try:
        connector_conf()
    except (RuntimeError, FileNotFoundError) as exc:
        return str(exc)
    return None


def spark_session(app_name: str = "mockbroker-tests", master: str = "local[2]",
                  conf: dict[str, str] | None = None) -> SparkSession:
    """A local SparkSession with the Kafka connector on its class path (getOrCreate).

    The connector settings only take effect when this creates the process's first Spark context
    (PySpark passes them to spark-submit when it starts the JVM); `conf` adds or overrides settings.
    """
    from pyspark.sql import SparkSession

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # else Spark binds to the host's address
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in {**DEFAULT_SESSION_CONF, **connector_conf(), **(conf or {})}.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()
