#!/usr/bin/env python3
"""Print the api-versions-by-release.csv rows of one Kafka release, read from its request schemas: a folder of
`*Request.json` files or a kafka-clients jar (its `common/message/` resources).

Usage:
    python tools/release_rows.py RELEASE (JAR | FOLDER) > tools/data/api-versions-RELEASE.csv

The rows (release, api_key, name, min_version, max_version, listeners, latest_version_unstable) are those of
../shared/kafka-protocol/api-versions-by-release.csv, with its header. Only a schema's header fields are read,
each alone (a few released files have a stray bracket), from the JSON with `//` comments.
tools/gen_personas.py reads the files in tools/data/ beside that CSV, for the releases it lacks.
"""

from __future__ import annotations

import csv
import json
import re
import sys
import zipfile
from pathlib import Path

FIELDS = ["release", "api_key", "name", "min_version", "max_version", "listeners", "latest_version_unstable"]


def _field(text: str, name: str) -> object:
    m = re.search(rf'"{name}"\s*:\s*("[^"]*"|\[[^\]]*\]|true|false|-?\d+)', text)
    return json.loads(m.group(1)) if m else None


def row(release: str, text: str) -> dict[str, str] | None:
    """The CSV row of one request schema (None: not a request)."""
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
    if _field(text, "type") != "request":
        return None
    lo, _, hi = str(_field(text, "validVersions")).partition("-")
    listeners = _field(text, "listeners") or []
    assert isinstance(listeners, list)
    return {"release": release, "api_key": str(_field(text, "apiKey")),
            "name": str(_field(text, "name")).removesuffix("Request"), "min_version": lo, "max_version": hi or lo,
            "listeners": " ".join(listeners),
            "latest_version_unstable": "true" if _field(text, "latestVersionUnstable") is True else "false"}


def schemas(source: Path) -> list[str]:
    if source.is_dir():
        return [p.read_text() for p in sorted(source.glob("*Request.json"))]
    with zipfile.ZipFile(source) as jar:
        return [jar.read(n).decode() for n in sorted(jar.namelist())
                if n.startswith("common/message/") and n.endswith("Request.json")]


def rows(release: str, source: Path) -> list[dict[str, str]]:
    out = [r for r in (row(release, text) for text in schemas(source)) if r is not None]
    return sorted(out, key=lambda r: int(r["api_key"]))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    writer = csv.DictWriter(sys.stdout, FIELDS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows(args[0], Path(args[1])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
