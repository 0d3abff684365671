#!/usr/bin/env python3
"""Print (or --write into docs/apis.md) the table of API keys and versions the broker serves.

The table sits in docs/apis.md between the markers <!-- api-table:start --> and <!-- api-table:end -->;
tests/test_docs.py fails when it disagrees with the dispatch registry.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from mockbroker.dispatch import supported_versions  # noqa: E402
from mockbroker.protocol.messages import api_name  # noqa: E402

START, END = "<!-- api-table:start -->", "<!-- api-table:end -->"
KAFKA_KEYS = REPO.parent / "shared" / "kafka-protocol" / "api-keys-4.3.0.csv"


def kafka_ranges() -> dict[int, str]:
    if not KAFKA_KEYS.exists():
        return {}
    with open(KAFKA_KEYS) as fh:
        return {int(r["api_key"]): f"{r['min_version']}-{r['max_stable_version']}" for r in csv.DictReader(fh)}


def table() -> str:
    kafka = kafka_ranges()
    lines = ["| key | API | versions served | Kafka 4.3.0 broker |", "| ---: | --- | --- | --- |"]
    for key, lo, hi in supported_versions():
        lines.append(f"| {key} | {api_name(key)} | {lo}-{hi} | {kafka.get(key, '')} |")
    return "\n".join(lines)


def splice(readme: str) -> str:
    head, _, rest = readme.partition(START)
    _, _, tail = rest.partition(END)
    return f"{head}{START}\n{table()}\n{END}{tail}"


if __name__ == "__main__":
    if "--write" in sys.argv:
        path = REPO / "docs" / "apis.md"
        path.write_text(splice(path.read_text()))
    else:
        print(table())
