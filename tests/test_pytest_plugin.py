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
