"""A Spark Structured Streaming pipeline: JSON events from Kafka, windowed counts back to Kafka.

    events (JSON) --Kafka source--> parse --watermark 30 s--> 1-minute windows per action
        --> count, sum(amount) --Kafka sink--> action-counts (JSON, keyed by action), checkpointed

Against any Kafka (or a mockbroker: run.py starts one for it):

    python examples/spark_pipeline/pipeline.py --bootstrap 127.0.0.1:9092 --checkpoint /tmp/ckpt \
        [--input events] [--output action-counts] [--available-now | --trigger-seconds 5]

It needs PySpark 4 and Spark's Kafka connector: see mockbroker.testing.spark (MOCKBROKER_SPARK_JARS,
or spark.jars.packages when Maven Central is reachable).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import StreamingQuery

EVENT_SCHEMA = "user STRING, action STRING, amount DOUBLE, event_time TIMESTAMP"
WATERMARK = "30 seconds"
WINDOW = "1 minute"


def kafka_options(bootstrap: str, **options: str) -> dict[str, str]:
    """Spark's Kafka options for a broker (mockbroker.testing.spark's when mockbroker is installed)."""
    try:
        from mockbroker.testing.spark import spark_kafka_options
    except ImportError:  # pragma: no cover - the pipeline runs against any Kafka
        return {"kafka.bootstrap.servers": bootstrap, **options}
    return spark_kafka_options(bootstrap, **options)


def parse_events(raw: DataFrame) -> DataFrame:
    """Kafka rows -> (user, action, amount, event_time); unparseable values are dropped."""
    from pyspark.sql import functions as F

    parsed = raw.select(F.from_json(F.col("value").cast("string"), EVENT_SCHEMA,
                                    {"timestampFormat": "yyyy-MM-dd'T'HH:mm:ssX"}).alias("e"))
    return parsed.select("e.*").where(F.col("event_time").isNotNull() & F.col("action").isNotNull())


def windowed_counts(events: DataFrame) -> DataFrame:
    """Per action and 1-minute window: the number of events and the total amount, emitted once the
    watermark (the latest event time seen, minus 30 s) has passed the window's end."""
    from pyspark.sql import functions as F

    return (events.withWatermark("event_time", WATERMARK)
            .groupBy(F.window("event_time", WINDOW), "action")
            .agg(F.count("*").alias("events"), F.round(F.sum("amount"), 2).alias("amount")))


def to_kafka_records(counts: DataFrame) -> DataFrame:
    """(key, value, headers) for Spark's Kafka sink: keyed by action, the window and totals as JSON."""
    from pyspark.sql import functions as F

    value = F.to_json(F.struct(
        F.date_format("window.start", "yyyy-MM-dd'T'HH:mm:ss'Z'").alias("window_start"),
        F.date_format("window.end", "yyyy-MM-dd'T'HH:mm:ss'Z'").alias("window_end"),
        "action", "events", "amount"))
    headers = F.array(F.struct(F.lit("producer").alias("key"), F.lit(b"spark-pipeline").alias("value")))
    return counts.select(F.col("action").alias("key"), value.alias("value"), headers.alias("headers"))


def start(spark: SparkSession, bootstrap: str, checkpoint: str | Path, *, input_topic: str = "events",
          output_topic: str = "action-counts", available_now: bool = False,
          trigger_seconds: float = 5.0, starting_offsets: str = "earliest") -> StreamingQuery:
    """Start the pipeline's streaming query (append mode: each window once, when it closes)."""
    raw = (spark.readStream.format("kafka")
           .options(**kafka_options(bootstrap, subscribe=input_topic, startingOffsets=starting_offsets))
           .load())
    writer = (to_kafka_records(windowed_counts(parse_events(raw))).writeStream
              .format("kafka")
              .options(**kafka_options(bootstrap, topic=output_topic))
              .option("checkpointLocation", str(checkpoint))
              .outputMode("append")
              .queryName(f"windowed-counts-{input_topic}"))
    if available_now:
        writer = writer.trigger(availableNow=True)
    else:
        writer = writer.trigger(processingTime=f"{trigger_seconds} seconds")
    return writer.start()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap", required=True, help="host:port of the broker")
    parser.add_argument("--checkpoint", required=True, help="the query's checkpoint directory")
    parser.add_argument("--input", default="events")
    parser.add_argument("--output", default="action-counts")
    when = parser.add_mutually_exclusive_group()
    when.add_argument("--available-now", action="store_true", help="process what is there, then stop")
    when.add_argument("--trigger-seconds", type=float, default=5.0, help="micro-batch interval (default 5)")
    args = parser.parse_args(argv)

    from mockbroker.testing.spark import spark_session

    spark = spark_session("spark-pipeline")
    spark.sparkContext.setLogLevel("WARN")
    query = start(spark, args.bootstrap, args.checkpoint, input_topic=args.input, output_topic=args.output,
                  available_now=args.available_now, trigger_seconds=args.trigger_seconds)
    try:
        query.awaitTermination()
    except KeyboardInterrupt:
        query.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
