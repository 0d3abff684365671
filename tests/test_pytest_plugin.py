"""The pytest plugin: fixtures for sync and asyncio tests, the marker, registration by entry point."""

from __future__ import annotations

from pathlib import Path

import pytest

from mockbroker import MockBroker
from tests.rawclient import RawClient

pytest_plugins = ["pytester"]


def test_fixture_gives_a_running_broker_to_a_sync_test(mockbroker: MockBroker) -> None:
    with RawClient(mockbroker.host, mockbroker.port) as c:
        assert c.request(18, 0, {}).error_code == 0
    assert mockbroker.bootstrap_servers == f"127.0.0.1:{mockbroker.port}"


async def test_fixture_serves_an_asyncio_test(mockbroker: MockBroker) -> None:
    from aiokafka import AIOKafkaProducer

    producer = AIOKafkaProducer(bootstrap_servers=mockbroker.bootstrap_servers)
    await producer.start()
    try:
        await producer.send_and_wait("from-async", b"hello", key=b"k")
    finally:
        await producer.stop()
    assert [r.value for r in mockbroker.records("from-async")] == [b"hello"]


@pytest.mark.mockbroker(partitions=4, auto_create_topics=True)
def test_marker_configures_the_fixture(mockbroker: MockBroker) -> None:
    with RawClient(mockbroker.host, mockbroker.port) as c:
        meta = c.request(3, 12, {"topics": [{"name": "auto"}], "allow_auto_topic_creation": True})
    assert len(meta.topics[0].partitions) == 4


async def test_asyncio_context_manager_runs_in_the_test_loop() -> None:
    async with MockBroker(port=0) as broker:
        broker.create_topic("t", partitions=2)
        assert broker.offsets("t", 1) == {"log_start_offset": 0, "high_watermark": 0, "last_stable_offset": 0}


def test_factory_starts_independent_brokers(mockbroker_factory) -> None:  # type: ignore[no-untyped-def]
    a = mockbroker_factory()
    b = mockbroker_factory(node_id=7)
    assert a.port != b.port
    with RawClient(b.host, b.port) as c:
        assert [n.node_id for n in c.request(3, 1, {"topics": None}).brokers] == [7]


def test_plugin_is_registered_by_installing_the_package(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        def test_uses_fixture(mockbroker):
            mockbroker.create_topic("x")
            assert mockbroker.records("x") == []
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_shared_fixture_restores_the_prepared_baseline_before_each_test(pytester: pytest.Pytester,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parent.parent))  # this checkout's plugin
    pytester.makeconftest(
        """
        import pytest

        @pytest.fixture(scope="session")
        def mockbroker_baseline(mockbroker_session):
            mockbroker_session.create_topic("prepared", 2)
            return mockbroker_session.snapshot()
        """
    )
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.parametrize("round", range(3))
        def test_sees_only_the_baseline(mockbroker_shared, round):
            assert mockbroker_shared.topics() == ["prepared"]
            mockbroker_shared.create_topic(f"scratch-{round}")
            mockbroker_shared.delete_topic("prepared")
            mockbroker_shared.clock.advance(60)
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)


def test_shared_fixture_without_a_baseline_resets_to_the_state_at_start(pytester: pytest.Pytester,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parent.parent))
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.parametrize("round", range(2))
        def test_starts_empty(mockbroker_shared, round):
            assert mockbroker_shared.topics() == [] and mockbroker_shared.faults.rules == []
            mockbroker_shared.create_topic("t")
            mockbroker_shared.inject(0, error=6)
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)

XDIST_SUITE = '''
import json
import os

import pytest
from confluent_kafka import Producer

WORKER = os.environ.get("PYTEST_XDIST_WORKER", "none")


def note(kind, **facts):
    """One JSON line per test in a file of this worker's (the outer test reads them all)."""
    with open(os.path.join(os.environ["PROBE_DIR"], f"{WORKER}.jsonl"), "a") as out:
        out.write(json.dumps({"kind": kind, "worker": WORKER, **facts}) + "\\n")


@pytest.mark.parametrize("i", range(6))
def test_session_broker_is_this_workers(mockbroker_session, i):
    if "shared-name" not in mockbroker_session.topics():
        mockbroker_session.create_topic("shared-name")
    producer = Producer({"bootstrap.servers": mockbroker_session.bootstrap_servers})
    producer.produce("shared-name", value=WORKER.encode())
    assert producer.flush(30) == 0
    # the same topic name on every worker: this broker holds this worker's records only
    values = {r.value for r in mockbroker_session.records("shared-name")}
    note("session", port=mockbroker_session.port, values=sorted(v.decode() for v in values))


@pytest.mark.parametrize("i", range(6))
def test_fresh_and_factory_brokers(mockbroker, mockbroker_factory, tmp_path, i):
    stored = mockbroker_factory(data_dir=tmp_path / "data", security="SSL")
    stored.create_topic("kept")
    note("fresh", port=mockbroker.port, factory_port=stored.port, data_dir=str(tmp_path / "data"),
         ca_file=str(stored.tls.ca_file), kept=os.path.isdir(tmp_path / "data" / "kept-0"))
'''


def test_xdist_workers_each_get_their_own_brokers(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """`pytest -p xdist -n 2`: every worker has its own session broker, ports, data dirs and CA files."""
    import json
    import os
    from pathlib import Path

    pytest.importorskip("xdist")
    repo = Path(__file__).resolve().parents[1]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(repo), os.environ.get("PYTHONPATH", "")]))
    probe = pytester.mkdir("probe")
    monkeypatch.setenv("PROBE_DIR", str(probe))
    pytester.makepyfile(test_suite=XDIST_SUITE)
    result = pytester.runpytest_subprocess("-p", "xdist", "-n", "2", "-p", "no:cacheprovider", timeout=300)
    result.assert_outcomes(passed=12)

    notes = [json.loads(line) for f in sorted(probe.iterdir()) for line in f.read_text().splitlines()]
    assert len(notes) == 12
    workers = {n["worker"] for n in notes}
    assert workers == {"gw0", "gw1"}, workers  # both workers ran tests (xdist deals items to every worker)
    session_ports = {w: {n["port"] for n in notes if n["kind"] == "session" and n["worker"] == w} for w in workers}
    # each worker one session broker, the two on different ports (both live for their whole worker session)
    assert all(len(ports) == 1 for ports in session_ports.values()), session_ports
    assert session_ports["gw0"] != session_ports["gw1"]
    for n in notes:
        if n["kind"] == "session":  # the worker's own records only, in a topic of the same name on both
            assert n["values"] == [n["worker"]], n
    fresh = [n for n in notes if n["kind"] == "fresh"]
    assert len({n["data_dir"] for n in fresh}) == len(fresh) and all(n["kept"] for n in fresh)
    assert len({n["ca_file"] for n in fresh}) == len(fresh)
    for n in fresh:  # tmp_path lives under the worker's own base directory
        assert any(n["worker"] in part for part in Path(n["data_dir"]).parts), n["data_dir"]
