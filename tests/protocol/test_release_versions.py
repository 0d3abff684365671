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
                                      "3.9", "4.0", "4.1", "4.2", "4.3"]


def changed(older: str, newer: str) -> dict[int, tuple[tuple[int, int] | None, tuple[int, int] | None]]:
    a, b = RELEASE_VERSIONS[older], RELEASE_VERSIONS[newer]
    return {k: (a.get(k), b.get(k)) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)}


def test_4_0_is_4_1_less_4_1s_additions() -> None:
    """4.1 added Produce v13 and Fetch v18 (KIP-516/1166), AlterPartitionReassignments v1, ListTransactions v2,
    ListConfigResources v1, the share APIs (v1 and the share-state and share-offsets RPCs) and re-added
    JoinGroup v0-1; a 4.0 broker advertised none of them."""
    share = {k: (None, RELEASE_VERSIONS["4.1"][k]) for k in (76, 77, 78, 79, 83, 84, 85, 86, 87, 90, 91, 92)}
    assert changed("4.0", "4.1") == {0: ((3, 12), (3, 13)), 1: ((4, 17), (4, 18)), 11: ((2, 9), (0, 9)),
                                     45: ((0, 0), (0, 1)), 66: ((0, 1), (0, 2)), 74: ((0, 0), (0, 1)), **share}


def test_4_0_drops_what_kip_896_removed_and_brings_kip_848_and_tv2() -> None:
    r39, r40 = RELEASE_VERSIONS["3.9"], RELEASE_VERSIONS["4.0"]
    assert r40[1] == (4, 17) and r40[2] == (1, 10) and r40[8] == (2, 9) and r40[9] == (1, 9)  # KIP-896 floors
    assert r40[68] == (0, 1) and r40[69] == (0, 1) and r39[68] == (0, 0)  # KIP-848 GA
    assert r40[26] == (0, 5) and r39[26] == (0, 4) and r40[0] == (3, 12)  # EndTxn v5, Produce v12: TV2
    assert not {4, 5, 6, 7, 56, 58, 67} & set(r40)  # ZooKeeper and controller-only APIs


def test_4_2_is_4_3_less_describe_log_dirs_v5() -> None:
    assert changed("4.2", "4.3") == {35: ((1, 4), (1, 5))}


def test_4_2_adds_to_4_1() -> None:
    assert changed("4.1", "4.2") == {2: ((1, 10), (1, 11)), 8: ((2, 9), (2, 10)), 9: ((1, 9), (1, 10)),
                                     27: ((1, 1), (1, 2)), 78: ((1, 1), (1, 2)), 79: ((1, 1), (1, 2)),
                                     80: ((0, 0), (0, 1)), 85: ((0, 0), (0, 1)), 87: ((0, 0), (0, 1)),
                                     88: (None, (0, 0)), 89: (None, (0, 0)), 90: ((0, 0), (0, 1))}


@pytest.mark.parametrize("release", ["4.0.0", "4.2.0"])
def test_the_kversion_rows_are_advertised_ranges(release: str) -> None:
    with open(REPO_ROOT / "tools" / "data" / f"api-versions-{release}.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert {r["release"] for r in rows} == {release}
    assert {r["latest_version_unstable"] for r in rows} == {"false"}
    assert all("broker" in r["listeners"].split() for r in rows)
    assert RELEASE_VERSIONS[release[:3]] == {int(r["api_key"]): (int(r["min_version"]), int(r["max_version"]))
                                             for r in rows}


# A table in franz-go's form (pkg/kversion/requests.go), made up here: each release clones the one before.
KVERSION_SAMPLE = """
func b28() *release {
	return &release{
		reqs: map[int16]req{
			0:  {key: 0, vmax: 9},  // produce
			11: {key: 11, vmax: 7}, // join group
			58: {key: 58, vmax: 0}, // envelope
		},
	}
}

func b30() *release {
	now := b28().clone(3, 0)
	delete(now.reqs, 58) // gone
	now.incmax(0, 10) // a bump
	now.addkey(68)
	now.addkeyver(22, 4)
	return now
}

func b40() *release {
	now := b30().clone(4, 0)
	now.setmin(11, 2)
	now.setmin(0, 1)
	return now
}
"""


def test_kversion_rows_follows_the_clone_chain() -> None:
    tool = load_generator("kversion_rows")
    tables = tool.broker_tables(KVERSION_SAMPLE)
    assert tables["2.8"] == {0: (0, 9), 11: (0, 7), 58: (0, 0)}
    assert tables["3.0"] == {0: (0, 10), 11: (0, 7), 68: (0, 0), 22: (0, 4)}
    assert tables["4.0"] == {0: (1, 10), 11: (2, 7), 68: (0, 0), 22: (0, 4)}
    neighbour = [{"release": "4.1.0", "api_key": "0", "name": "Produce", "min_version": "3", "max_version": "13",
                  "listeners": "broker", "latest_version_unstable": "false"},
                 {"release": "4.1.0", "api_key": "11", "name": "JoinGroup", "min_version": "0", "max_version": "9",
                  "listeners": "broker", "latest_version_unstable": "false"}]
    got = tool.rows("4.0.0", {0: (1, 10), 11: (2, 7)}, neighbour)
    assert [(r["name"], r["min_version"], r["max_version"]) for r in got] == [("Produce", "3", "10"),
                                                                               ("JoinGroup", "2", "7")]


def test_kversion_rows_refuses_a_skipped_version() -> None:
    with pytest.raises(ValueError, match="skips a version"):
        load_generator("kversion_rows").broker_tables(KVERSION_SAMPLE.replace("now.incmax(0, 10)", "now.incmax(0, 11)"))


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
