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

Seeds (mockbroker/state/seeding.py): every broker the fixtures make takes its seed from the session's,
`--mockbroker-seed=N` or one drawn at start (the n-th broker of a test: N + n; a `seed=` argument wins). The
seed is in the pytest header, and a failed test that used a broker gets a "mockbroker" report section
naming its brokers' seeds, so `--mockbroker-seed=N` replays what the broker chose. Under pytest-xdist every
worker takes the controller's seed, the one in the header.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from mockbroker.remote import pytest_support
from mockbroker.server import MockBroker
from mockbroker.snapshots import Snapshot
from mockbroker.state.seeding import new_seed

SEED_KEY = pytest.StashKey[int]()  # the session's seed, on the config
TEST_SEEDS_KEY = pytest.StashKey[list[int]]()  # the seeds of a test's brokers, on its item


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("mockbroker").addoption(
        "--mockbroker-seed", type=int, default=None, metavar="N",
        help="the seed of the brokers the mockbroker fixtures make (default: a fresh one, in the header)")
    pytest_support.add_option(parser)  # --kafka-bootstrap: the remote target (mockbroker/remote)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "mockbroker(**kwargs): arguments for the mockbroker fixture's MockBroker")
    pytest_support.configure(config)
    seed = config.getoption("mockbroker_seed", None)
    worker_input = getattr(config, "workerinput", {})  # a pytest-xdist worker: the controller's seed
    seed = worker_input.get("mockbroker_seed", seed)
    config.stash[SEED_KEY] = new_seed() if seed is None else seed


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist: every worker takes the seed the header shows."""
    node.workerinput["mockbroker_seed"] = node.config.stash[SEED_KEY]


def pytest_report_header(config: pytest.Config) -> str:
    return f"mockbroker seed: {config.stash[SEED_KEY]} (replay with --mockbroker-seed={config.stash[SEED_KEY]})"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    report: Any = yield
    seeds = item.stash.get(TEST_SEEDS_KEY, [])
    if report.failed and seeds:
        report.sections.append(("mockbroker", f"broker seed(s): {seeds} (replay with "
                                              f"--mockbroker-seed={item.config.stash[SEED_KEY]})"))
    return report


@pytest.fixture
def mockbroker_factory(request: pytest.FixtureRequest) -> Iterator[Callable[..., MockBroker]]:
    stack = contextlib.ExitStack()
    seeds = request.node.stash.setdefault(TEST_SEEDS_KEY, [])

    def start(**kwargs: Any) -> MockBroker:
        kwargs.setdefault("port", 0)
        kwargs.setdefault("seed", request.config.stash[SEED_KEY] + len(seeds))
        seeds.append(kwargs["seed"])
        return stack.enter_context(MockBroker(**kwargs).run_in_thread())

    with stack:
        yield start


def pytest_runtest_setup(item: pytest.Item) -> None:
    pytest_support.skip_if_embedded_only(item)  # @pytest.mark.embedded_only on a remote run


@pytest.fixture
def mockbroker(request: pytest.FixtureRequest, mockbroker_factory: Callable[..., MockBroker]) -> Iterator[MockBroker]:
    """A fresh broker; on a remote run (--kafka-bootstrap) a RemoteBroker on that cluster (mockbroker/remote)."""
    remote = pytest_support.remote_bootstrap(request.config)
    if remote is not None:
        with pytest_support.remote_target(request, remote) as target:  # isolated, secured (docs/remote-target.md)
            yield target  # type: ignore[misc]  # the same test API; embedded-only calls raise NotOnRemoteTarget
        return
    marker = request.node.get_closest_marker("mockbroker")
    kwargs = dict(marker.kwargs) if marker else {}
    kwargs.pop("isolate", None)  # a remote run's option: a fresh embedded broker is isolated already
    kwargs.pop("proxy", None)  # the remote target's fault proxy; the embedded broker needs none
    yield mockbroker_factory(**kwargs)


@pytest.fixture(scope="session")
def mockbroker_session(pytestconfig: pytest.Config) -> Iterator[MockBroker]:
    with MockBroker(port=0, seed=pytestconfig.stash[SEED_KEY]).run_in_thread() as broker:
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
