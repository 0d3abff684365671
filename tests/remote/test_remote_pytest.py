"""The pytest side of the remote target: `--kafka-bootstrap` (or MOCKBROKER_KAFKA_BOOTSTRAP) makes the
`mockbroker` fixture a RemoteBroker on that cluster, and `@pytest.mark.embedded_only` tests are skipped
with the reason; the cluster here is a MockBroker(brokers=3) the test run reaches only over the wire."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from mockbroker import MockBroker

pytest_plugins = ["pytester"]
REPO = Path(__file__).resolve().parents[2]

SUITE = '''
import pytest
from mockbroker.remote import NotOnRemoteTarget, RemoteBroker

def test_the_fixture_is_the_remote_target(mockbroker):
    assert isinstance(mockbroker, RemoteBroker)
    mockbroker.create_topic("from-the-suite", 2)
    assert "from-the-suite" in mockbroker.topics()
    assert mockbroker.records("from-the-suite") == []
    with pytest.raises(NotOnRemoteTarget, match="compact"):
        mockbroker.compact("from-the-suite")

@pytest.mark.embedded_only
def test_needs_the_clock(mockbroker):
    mockbroker.clock.advance(1000)
'''


@pytest.fixture(autouse=True)
def this_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite's pytest imports this checkout's mockbroker (its plugin), whatever is installed."""
    monkeypatch.setenv("PYTHONPATH", str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))


@pytest.fixture(scope="module")
def cluster() -> Iterator[MockBroker]:
    with MockBroker(brokers=3).run_in_thread() as broker:
        yield broker


def test_kafka_bootstrap_option_runs_the_suite_against_the_cluster(pytester: pytest.Pytester,
                                                                    cluster: MockBroker) -> None:
    pytester.makepyfile(SUITE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rs", "--kafka-bootstrap",
                                           cluster.bootstrap_servers)
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*embedded_only: needs the embedded broker; this run targets the Kafka cluster at*"])
    # made on the cluster under the test's prefix, through Kafka's protocol, and deleted at teardown
    assert not [t for t in cluster.topics() if t.endswith("from-the-suite")]


def test_environment_variable_selects_the_remote_target(pytester: pytest.Pytester, cluster: MockBroker,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    if "from-the-suite" in cluster.topics():  # the suite makes it; the first test may have run
        cluster.delete_topic("from-the-suite")
    monkeypatch.setenv("MOCKBROKER_KAFKA_BOOTSTRAP", cluster.bootstrap_servers)
    monkeypatch.setenv("MOCKBROKER_KAFKA_ISOLATION", "off")
    pytester.makepyfile(SUITE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, skipped=1)
    assert "from-the-suite" in cluster.topics()  # isolation off: the name the test gave, left in place


def test_without_the_option_the_fixture_is_embedded_and_embedded_only_runs(pytester: pytest.Pytester,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MOCKBROKER_KAFKA_BOOTSTRAP", raising=False)
    pytester.makepyfile('''
import pytest
from mockbroker import MockBroker

@pytest.mark.embedded_only
def test_runs_embedded(mockbroker):
    assert isinstance(mockbroker, MockBroker)
    mockbroker.clock.advance(1000)
''')
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
