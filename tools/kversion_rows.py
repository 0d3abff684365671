#!/usr/bin/env python3
"""Print the api-versions rows of a Kafka release no kafka-clients jar here holds (4.0.0, 4.2.0), from the
broker version table of franz-go's `pkg/kversion/requests.go` and a neighbouring release's jar rows.

Usage:
    python tools/kversion_rows.py check REQUESTS_GO
    python tools/kversion_rows.py RELEASE REQUESTS_GO NEIGHBOUR_CSV > tools/data/api-versions-RELEASE.csv

franz-go (github.com/twmb/franz-go, BSD-3) keeps, per Kafka release, the API versions a KRaft broker advertises
in ApiVersions: `b28()` lists 2.8's, and each later `bNN()` clones the one before and applies its changes
(`incmax`, `addkey`, `addkeyver`, `setmin`, `delete`), each citing the Kafka commit and KIP. This tool reads
that chain (the file is read as data, nothing of it is kept) and writes, for each API key of the release's
table, a row of tools/release_rows.py's CSV: name and listeners from the neighbour's row (a jar-made CSV),
max_version from franz-go, min_version the larger of the neighbour's schema floor and franz-go's (franz-go
keeps Produce's advertised floor at 0, KAFKA-18659, where the schema says 3; see docs/gaps.md), and
latest_version_unstable false: the rows hold what the broker advertises, not every schema's full range
(APIs only a controller serves, or whose only versions are unstable, are absent).

`check` compares franz-go's tables with the releases whose rows come from Kafka's own schemas: 3.9.0's
(`broker` listener), 4.1.0's (tools/data) and 4.3.0's, and prints every difference of the advertised
maxima and floors; the rows are only as good as that comparison (see tools/data/README.md).
"""

from __future__ import annotations

import csv
import re
import sys
from pathlib import Path

FIELDS = ["release", "api_key", "name", "min_version", "max_version", "listeners", "latest_version_unstable"]
HERE = Path(__file__).resolve().parent


def broker_tables(source: str) -> dict[str, dict[int, tuple[int, int]]]:
    """"4.0" -> api_key -> (min, max) of franz-go's broker release functions b28() ... bNN()."""
    bodies = dict(re.findall(r"func (b\d+)\(\) \*release \{(.*?)\n\}", source, re.S))
    tables: dict[str, dict[int, tuple[int, int]]] = {}

    def table(name: str) -> dict[int, tuple[int, int]]:
        body = bodies[name]
        if name == "b28":
            return {int(k): (0, int(v)) for k, v in re.findall(r"(\d+):\s*\{key: \d+, vmax: (\d+)\}", body)}
        parent = re.search(r"now := (b\d+)\(\)\.clone", body)
        if parent is None:
            raise ValueError(f"{name}: no clone of an earlier release")
        reqs = dict(table(parent.group(1)))
        for raw in body.splitlines():
            line = raw.split("//")[0].strip()
            gone = re.fullmatch(r"delete\(now\.reqs, (\d+)\)", line)
            if gone:
                del reqs[int(gone.group(1))]
                continue
            m = re.fullmatch(r"now\.(\w+)\(([\d, ]*)\)", line)
            if m is None or m.group(1) == "clone":
                continue
            op, args = m.group(1), [int(a) for a in m.group(2).split(",")]
            if op == "incmax":
                if reqs[args[0]][1] + 1 != args[1]:
                    raise ValueError(f"{name}: {line} skips a version")
                reqs[args[0]] = (reqs[args[0]][0], args[1])
            elif op in ("addkey", "addkeyver"):
                if args[0] in reqs:
                    raise ValueError(f"{name}: {line} adds a key already there")
                reqs[args[0]] = (0, args[1] if op == "addkeyver" else 0)
            elif op == "setmin":
                reqs[args[0]] = (args[1], reqs[args[0]][1])
            else:
                raise ValueError(f"{name}: unknown step {line}")
        return reqs

    for name in sorted(bodies, key=lambda n: int(n[1:])):
        major, minor = name[1], name[2:]
        tables[f"{major}.{minor}"] = table(name)
    return tables


def advertised(rows: list[dict[str, str]]) -> dict[int, tuple[int, int]]:
    """What a KRaft broker of these rows' release advertises: `broker` listener, unstable newest left out."""
    out = {}
    for row in rows:
        if "broker" not in row["listeners"].split():
            continue
        lo, hi = int(row["min_version"]), int(row["max_version"]) - (row["latest_version_unstable"] == "true")
        if hi >= lo:
            out[int(row["api_key"])] = (lo, hi)
    return out


def read_rows(path: Path, release: str | None = None) -> list[dict[str, str]]:
    with open(path, newline="") as fh:
        return [r for r in csv.DictReader(fh) if release is None or r["release"] == release]


def rows(release: str, table: dict[int, tuple[int, int]], neighbour: list[dict[str, str]]) -> list[dict[str, str]]:
    by_key = {int(r["api_key"]): r for r in neighbour}
    out = []
    for key in sorted(table):
        lo, hi = table[key]
        near = by_key[key]
        out.append({"release": release, "api_key": str(key), "name": near["name"],
                    "min_version": str(max(lo, int(near["min_version"]))), "max_version": str(hi),
                    "listeners": near["listeners"], "latest_version_unstable": "false"})
    return out


def differences(tables: dict[str, dict[int, tuple[int, int]]], shared: Path) -> list[str]:
    """Every difference between franz-go's tables and the jar/schema-made rows of 3.9.0, 4.1.0 and 4.3.0."""
    known = {"3.9": read_rows(shared / "api-versions-by-release.csv", "3.9.0"),
             "4.1": read_rows(HERE / "data" / "api-versions-4.1.0.csv"),
             "4.3": read_rows(shared / "api-versions-by-release.csv", "4.3.0")}
    out = []
    for release, schema_rows in known.items():
        newest = max(tables, key=lambda r: tuple(map(int, r.split("."))))
        theirs, name = (tables[release], release) if release in tables else (tables[newest], newest)
        ours = advertised(schema_rows)
        for key in sorted(set(theirs) | set(ours)):
            if theirs.get(key) != ours.get(key):
                out.append(f"key {key}: franz-go {name} {theirs.get(key)}, {release} schemas {ours.get(key)}")
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) == 2 and args[0] == "check":
        for line in differences(broker_tables(Path(args[1]).read_text()), HERE.parent.parent / "shared" / "kafka-protocol"):
            print(line)
        return 0
    if len(args) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    release, source, neighbour = args
    table = broker_tables(Path(source).read_text())[".".join(release.split(".")[:2])]
    writer = csv.DictWriter(sys.stdout, FIELDS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows(release, table, read_rows(Path(neighbour))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
