"""mockbroker/protocol/release_versions.py is exactly what tools/gen_personas.py makes of
../shared/kafka-protocol/api-versions-by-release.csv, and holds what each release's broker advertises."""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from mockbroker.protocol.release_versions import RELEASE_VERSIONS
from tests.protocol.conftest import REPO_ROOT


def load_generator(name: str = "gen_personas") -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "tools" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_table_matches_a_fresh_generation(shared: Path) -> None:
    committed = (REPO_ROOT / "mockbroker" / "protocol" / "release_versions.py").read_text()
    assert committed.startswith("# GENERATED")
    assert committed == load_generator().generate(shared), (
        "mockbroker/protocol/release_versions.py is stale: run .venv/bin/python tools/gen_personas.py")


@pytest.mark.parametrize("release", ["3.9.0", "4.3.0"])
def test_release_rows_reads_a_releases_schemas_as_the_csv_has_them(shared: Path, release: str) -> None:
    """tools/release_rows.py (which made tools/data/api-versions-4.1.0.csv from kafka-clients-4.1.0.jar) gives
    the shared CSV's rows of the releases whose schemas are in ../shared."""
    with open(shared / "api-versions-by-release.csv", newline="") as fh:
        expected = [row for row in csv.DictReader(fh) if row["release"] == release]
    assert load_generator("release_rows").rows(release, shared / f"schemas-{release}") == expected


def test_the_4_1_rows_are_a_release_rows_csv() -> None:
    with open(REPO_ROOT / "tools" / "data" / "api-versions-4.1.0.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert {r["release"] for r in rows} == {"4.1.0"} and len(rows) == 93
    assert RELEASE_VERSIONS["4.1"][0] == (3, 13) and RELEASE_VERSIONS["4.1"][8] == (2, 9)  # v10 unstable in 4.1


def test_releases_are_those_of_the_csv() -> None:
    assert list(RELEASE_VERSIONS) == ["2.8", "3.0", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6", "3.7", "3.8",
                                      "3.9", "4.1", "4.3"]


def test_2_8_advertises_its_own_ranges() -> None:
    r = RELEASE_VERSIONS["2.8"]
    assert r[0] == (0, 9)  # Produce
    assert r[1] == (0, 12)  # Fetch
    assert r[18] == (0, 3)  # ApiVersions
    assert 68 not in r and 69 not in r  # no KIP-848 yet
    assert 67 not in r  # AllocateProducerIds: controller only


def test_4_3_drops_what_4_0_removed() -> None:
    r = RELEASE_VERSIONS["4.3"]
    assert r[0] == (3, 13) and r[1] == (4, 18) and r[8] == (2, 10)  # Produce v0-2, Fetch v0-3, OffsetCommit v0-1 gone
    assert r[68][0] == 0 and r[69][0] == 0


def test_unstable_newest_versions_are_not_advertised(shared: Path) -> None:
    with open(shared / "api-versions-by-release.csv") as fh:
        rows = [row for row in csv.DictReader(fh) if row["latest_version_unstable"] == "true"]
    assert rows, "the CSV marks some newest versions unstable"
    for row in rows:
        release = ".".join(row["release"].split(".")[:2])
        got = RELEASE_VERSIONS[release].get(int(row["api_key"]))
        assert got is None or got[1] == int(row["max_version"]) - 1
