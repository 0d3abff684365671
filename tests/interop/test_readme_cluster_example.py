"""The README's Clusters example (a pytest test of a leader move and a node stop) run as the README shows
it: the code block is taken from README.md and run by pytest in a subprocess, so the example cannot drift
from what works (issue #12 item 9)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.interop

README = Path(__file__).resolve().parents[2] / "README.md"


def clusters_example() -> str:
    text = README.read_text()
    section = text.split("\n## Clusters\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert blocks, "the README's Clusters section has no python example"
    return blocks[0]


def test_the_readme_clusters_example_passes_as_written(pytester: pytest.Pytester) -> None:
    pytest.importorskip("confluent_kafka")
    example = clusters_example()
    assert "@pytest.mark.mockbroker(brokers=3)" in example and "move_leader" in example
    pytester.makepyfile(test_readme_clusters=example)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", "-q")
    result.assert_outcomes(passed=1)
