"""The README's table of served APIs is the dispatch registry's (regenerate: tools/api_table.py --write)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def test_readme_api_table_matches_the_registry() -> None:
    spec = importlib.util.spec_from_file_location("api_table", REPO / "tools" / "api_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not module.KAFKA_KEYS.exists():
        pytest.skip("../shared/kafka-protocol is not beside the repository")
    readme = (REPO / "README.md").read_text()
    assert module.splice(readme) == readme, "README API table is stale: run tools/api_table.py --write"
