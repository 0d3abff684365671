"""The Clusters example of docs/clusters.md (a pytest test of a leader move and a node stop) run as the page shows
it: the code block is taken from docs/clusters.md and run by pytest in a subprocess, so the example cannot drift
from what works (issue #12 item 9)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.interop

CLUSTERS = Path(__file__).resolve().parents[2] / "docs" / "clusters.md"


def clusters_example() -> str:
    blocks = re.findall(r"```python\n(.*?)```", CLUSTERS.read_text(), re.S)
    assert blocks, "docs/clusters.md has no python example"
    return blocks[0]


def test_the_readme_clusters_example_passes_as_written(pytester: pytest.Pytester) -> None:
    pytest.importorskip("confluent_kafka")
    example = clusters_example()
    assert "@pytest.mark.mockbroker(brokers=3)" in example and "move_leader" in example
    pytester.makepyfile(test_readme_clusters=example)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", "-q")
    result.assert_outcomes(passed=1)
