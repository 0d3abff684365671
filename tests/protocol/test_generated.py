"""mockbroker/protocol/_generated/ is exactly what tools/gen_protocol.py makes of ../shared/kafka-protocol, and the
specs hold every version a client may speak."""

from __future__ import annotations

import csv
import functools
import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from mockbroker.protocol._generated.specs import MESSAGES, REQUEST_HEADER, RESPONSE_HEADER
from mockbroker.protocol.messages import REQUEST, RESPONSE, api_keys, api_name, is_flexible, version_range
from tests.protocol.conftest import REPO_ROOT


@functools.cache
def load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_protocol", REPO_ROOT / "tools" / "gen_protocol.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def covered_versions(api_key: int, kind: int) -> list[int]:
    return [v for lo, hi, _flex, _fields in MESSAGES[api_key][kind] for v in range(lo, hi + 1)]


def read_schema(path: Path) -> dict[str, Any]:
    gen = load_generator()
    data: dict[str, Any] = json.loads(gen.strip_comments(path.read_text()))
    return data


def api_key_rows(shared: Path) -> list[dict[str, str]]:
    with open(shared / "api-keys-4.3.0.csv") as fh:
        return list(csv.DictReader(fh))


def test_committed_generated_files_match_a_fresh_generation(shared: Path, tmp_path: Path) -> None:
    gen = load_generator()
    assert gen.main(["--shared", str(shared), "--out", str(tmp_path)]) == 0
    files = gen.generate(shared)
    committed = REPO_ROOT / "mockbroker" / "protocol" / "_generated"
    assert sorted(p.name for p in committed.glob("*.py")) == sorted(files)
    for name, text in files.items():
        assert (tmp_path / name).read_text() == text
        assert (committed / name).read_text() == text, (
            f"mockbroker/protocol/_generated/{name} is stale: run .venv/bin/python tools/gen_protocol.py")


def test_generation_is_deterministic(shared: Path) -> None:
    gen = load_generator()
    assert gen.generate(shared) == gen.generate(shared)


def test_every_api_key_of_the_4_3_0_broker_has_its_versions(shared: Path) -> None:
    for row in api_key_rows(shared):
        key, lo, hi = int(row["api_key"]), int(row["min_version"]), int(row["max_version_incl_unstable"])
        assert key in MESSAGES, row["name"]
        assert api_name(key) == row["name"]
        if hi < 0:
            continue
        for kind in (REQUEST, RESPONSE):
            assert set(range(lo, hi + 1)) <= set(covered_versions(key, kind)), (row["name"], kind)
    assert api_keys() == sorted(MESSAGES)


def test_versions_below_the_4_3_0_floor_come_from_3_9_0(shared: Path) -> None:
    gen = load_generator()
    for row in api_key_rows(shared):
        key, name = int(row["api_key"]), row["name"]
        old_path = shared / "schemas-3.9.0" / f"{name}Request.json"
        if not old_path.exists():
            continue
        old_range = gen.parse_versions(read_schema(old_path)["validVersions"])
        if old_range is None:
            continue
        floor = int(row["min_version"]) if int(row["max_version_incl_unstable"]) >= 0 else old_range[1] + 1
        wanted = set(range(old_range[0], min(floor, old_range[1] + 1)))
        for kind in (REQUEST, RESPONSE):
            assert wanted <= set(covered_versions(key, kind)), (name, kind, sorted(wanted))


@pytest.mark.parametrize("api_key, versions", [
    (0, range(0, 14)),  # Produce v0-v2 from 3.9.0, v3-v13 from 4.3.0
    (1, range(0, 19)),  # Fetch v0-v3 from 3.9.0
    (2, range(0, 12)),  # ListOffsets v0 from 3.9.0
    (4, range(0, 8)),  # LeaderAndIsr: gone in 4.x, all from 3.9.0
    (8, range(0, 11)),  # OffsetCommit v0-v1
    (9, range(0, 11)),  # OffsetFetch v0
])
def test_old_versions_that_4_0_removed_are_still_in_the_specs(api_key: int, versions: range) -> None:
    for kind in (REQUEST, RESPONSE):
        assert set(versions) <= set(covered_versions(api_key, kind))
    assert version_range(api_key)[0] == 0


def test_segments_are_sorted_and_do_not_overlap() -> None:
    for name, request, response in MESSAGES.values():
        for segs in (request, response):
            ends = [(lo, hi) for lo, hi, _flex, _fields in segs]
            assert all(lo <= hi for lo, hi in ends), name
            assert all(a[1] + 1 == b[0] for a, b in zip(ends, ends[1:], strict=False)), name


def test_requests_and_responses_agree_on_versions_and_flexibility() -> None:
    for key, (name, _request, response) in MESSAGES.items():
        assert covered_versions(key, REQUEST) == covered_versions(key, RESPONSE), name
        for version in covered_versions(key, REQUEST):
            flex = [seg[2] is not None and version >= seg[2] for seg in response if seg[0] <= version <= seg[1]]
            assert flex == [is_flexible(key, version)], (name, version)


def test_field_tuples_are_well_formed() -> None:
    primitives = {"int8", "int16", "int32", "int64", "uint16", "uint32", "float64", "string", "bytes",
                  "bool", "uuid", "records"}

    def check(fields: tuple[Any, ...], where: str) -> None:
        names = [f[0] for f in fields]
        assert len(names) == len(set(names)), where
        tags: set[int] = set()
        for name, ftype, versions, _nullable, tagged, tag, _default, never_flex, sub in fields:
            assert versions is not None and versions[0] <= versions[1], (where, name)
            base = ftype[2:] if ftype.startswith("[]") else ftype
            assert base in primitives or base == "struct", (where, name, ftype)
            assert (sub is not None) == (base == "struct"), (where, name)
            assert (tagged is None) == (tag is None), (where, name)
            if tag is not None:
                assert tag not in tags, (where, name)
                tags.add(tag)
            assert isinstance(never_flex, bool)
            if sub is not None:
                check(sub, f"{where}.{name}")

    for name, request, response in MESSAGES.values():
        for segs in (request, response):
            for lo, hi, _flex, fields in segs:
                check(fields, f"{name} v{lo}-{hi}")
    check(REQUEST_HEADER[3], "RequestHeader")
    check(RESPONSE_HEADER[3], "ResponseHeader")


def test_request_header_client_id_is_never_flexible() -> None:
    (client_id,) = [f for f in REQUEST_HEADER[3] if f[0] == "client_id"]
    assert client_id[7] is True and client_id[2] == (1, 32767) and client_id[3] == (1, 32767)
