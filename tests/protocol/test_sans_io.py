"""The protocol package is sans-IO: importing all of it pulls in neither asyncio nor socket.

One allowance, for socket only: third-party libraries that protocol modules import (crc32c, lz4, ...)
are imported first, and what they drag in is not held against the protocol package. crc32c, for one,
reads its own version through importlib.metadata, which imports email.utils, which imports socket.
asyncio gets no allowance at all.
"""

from __future__ import annotations

import ast
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

from mockbroker import protocol
from tests.protocol.conftest import REPO_ROOT

FORBIDDEN = {"asyncio", "socket", "_asyncio", "_socket"}
SOURCES = sorted((REPO_ROOT / "mockbroker" / "protocol").rglob("*.py"))

# pkgutil.walk_packages itself imports socket (through zipfile and friends), so the names are found in
# this process and the child only imports them.
PROBE = """
import importlib, json, sys
third_party, names = json.loads(sys.argv[1])
for name in third_party:
    importlib.import_module(name)
baseline = sorted(sys.modules)
for name in names:
    importlib.import_module(name)
print(json.dumps({"baseline": baseline, "after": sorted(sys.modules)}))
"""


def protocol_modules() -> list[str]:
    return ["mockbroker.protocol",
            *(info.name for info in pkgutil.walk_packages(protocol.__path__, "mockbroker.protocol."))]


def imported_names(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    out: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.module, node.lineno))
    return out


def third_party_imports() -> list[str]:
    tops = {name.split(".")[0] for path in SOURCES for name, _line in imported_names(path)}
    return sorted(t for t in tops if t != "mockbroker" and t not in sys.stdlib_module_names)


def probe(third_party: list[str], names: list[str]) -> tuple[set[str], set[str]]:
    result = subprocess.run([sys.executable, "-c", PROBE, json.dumps([third_party, names])], cwd=REPO_ROOT,
                            capture_output=True, text=True, check=True, timeout=60)
    report = json.loads(result.stdout)
    return set(report["baseline"]), set(report["after"])


def test_importing_every_protocol_module_leaves_asyncio_and_socket_out() -> None:
    names = protocol_modules()
    expected = {f"mockbroker.protocol{name}" for name in ("", ".primitives", ".errors", ".messages", ".headers",
                                                          ".framing", "._generated.specs", "._generated.error_codes")}
    assert expected <= set(names)
    baseline, after = probe(third_party_imports(), names)
    assert set(names) <= after
    assert not {"asyncio", "_asyncio"} & after
    assert not FORBIDDEN & (after - baseline), "a protocol module (or a stdlib module it uses) imports it"


def test_the_codec_core_imports_nothing_but_the_standard_library() -> None:
    core = [f"mockbroker.protocol.{name}" for name in ("primitives", "errors", "messages", "headers", "framing")]
    _baseline, after = probe([], core)
    assert not FORBIDDEN & after


def test_no_protocol_source_imports_asyncio_or_socket() -> None:
    assert len(SOURCES) >= 8
    for path in SOURCES:
        for name, line in imported_names(path):
            assert name.split(".")[0] not in FORBIDDEN, f"{path}:{line}"
        text = path.read_text()
        assert "import asyncio" not in text and "import socket" not in text, path


def test_the_probe_would_notice_a_socket_import() -> None:
    baseline, after = probe([], ["mockbroker.protocol", "socket"])
    assert "socket" in after - baseline
