"""The pytest plugin (registered through the `pytest11` entry point: installing the package is enough).

Fixtures:
- `mockbroker`: a fresh running broker per test, in its own thread, so it serves sync tests and
  pytest-asyncio tests alike. Configure it with a marker:
      @pytest.mark.mockbroker(partitions=3, config={"log.retention.ms": "1000"})
- `mockbroker_session`: one broker for the whole session (create unique topic names per test).
- `mockbroker_shared`: the session's broker, put back before each test to `mockbroker_baseline` (by default
  None: the state right after start, `broker.reset()`); override `mockbroker_baseline` (session scope) to
  prepare a state once and return `broker.snapshot()` of it (docs/snapshots.md).
- `mockbroker_factory`: start more brokers with any MockBroker arguments; all stop at teardown.

Every one starts from MockBroker's test defaults (mockbroker/settings.py TEST_DEFAULTS: group.initial.rebalance.delay.ms=0,
so a new group's first member is answered at once); `config={"group.initial.rebalance.delay.ms": 3000}` or
`defaults="kafka"` gives Kafka's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from mockbroker.server import MockBroker
from mockbroker.snapshots import Snapshot


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "mockbroker(**kwargs): arguments for the mockbroker fixture's MockBroker")


@pytest.fixture
def mockbroker_factory() -> Iterator[Callable[..., MockBroker]]:
    stack = contextlib.ExitStack()

    def start(**kwargs: Any) -> MockBroker:
        kwargs.setdefault("port", 0)
        return stack.enter_context(MockBroker(**kwargs).run_in_thread())

    with stack:
        yield start


@pytest.fixture
def mockbroker(request: pytest.FixtureRequest, mockbroker_factory: Callable[..., MockBroker]) -> MockBroker:
    marker = request.node.get_closest_marker("mockbroker")
    kwargs = dict(marker.kwargs) if marker else {}
    return mockbroker_factory(**kwargs)


@pytest.fixture(scope="session")
def mockbroker_session() -> Iterator[MockBroker]:
    with MockBroker(port=0).run_in_thread() as broker:
        yield broker


@pytest.fixture(scope="session")
def mockbroker_baseline(mockbroker_session: MockBroker) -> Snapshot | None:
    """What mockbroker_shared restores before each test: None, the state at start. Override it to prepare one."""
    return None


@pytest.fixture
def mockbroker_shared(mockbroker_session: MockBroker, mockbroker_baseline: Snapshot | None) -> MockBroker:
    """The session's broker, reset to mockbroker_baseline before the test (client connections closed)."""
    if mockbroker_baseline is None:
        mockbroker_session.reset()
    else:
        mockbroker_session.restore(mockbroker_baseline)
    return mockbroker_session
