"""The pytest plugin's side of the remote target: `--kafka-bootstrap HOST:PORT` or the environment variable
MOCKBROKER_KAFKA_BOOTSTRAP makes the `mockbroker` fixture yield a RemoteBroker on that cluster, and
`@pytest.mark.embedded_only` skips a test on such a run; `--kafka-proxy` (or MOCKBROKER_KAFKA_PROXY=1, or a
test's @pytest.mark.mockbroker(proxy=True)) puts the fault proxy in front of the cluster (mockbroker/pytest_plugin.py calls these)."""

from __future__ import annotations

import os

import pytest

ENV_BOOTSTRAP = "MOCKBROKER_KAFKA_BOOTSTRAP"
ENV_PROXY = "MOCKBROKER_KAFKA_PROXY"  # "1": the fault proxy, as --kafka-proxy
EMBEDDED_ONLY_MARKER = "embedded_only"


def add_option(parser: pytest.Parser) -> None:
    parser.getgroup("mockbroker").addoption(
        "--kafka-bootstrap", default=None, metavar="HOST:PORT",
        help=f"run the mockbroker fixture's tests against this Kafka cluster (also ${ENV_BOOTSTRAP}); "
             f"tests marked {EMBEDDED_ONLY_MARKER} are skipped")
    parser.getgroup("mockbroker").addoption(
        "--kafka-proxy", action="store_true", default=False,
        help=f"with --kafka-bootstrap: run the fault proxy (mockbroker/remote/proxy.py) in front of the cluster, "
             f"so inject/received/clear_faults work and clients bootstrap from it (also ${ENV_PROXY}=1)")


def configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{EMBEDDED_ONLY_MARKER}: the test needs the embedded broker; "
                                       "skipped on a remote run (--kafka-bootstrap)")


def remote_bootstrap(config: pytest.Config) -> str | None:
    """The remote cluster's bootstrap servers of this run, or None (the embedded broker)."""
    given = config.getoption("kafka_bootstrap", None) or os.environ.get(ENV_BOOTSTRAP, "")
    return given or None


def wants_proxy(request: pytest.FixtureRequest) -> bool:
    """Whether the remote target of this test runs the fault proxy: --kafka-proxy, $MOCKBROKER_KAFKA_PROXY=1,
    or the test's @pytest.mark.mockbroker(proxy=True)."""
    marker = request.node.get_closest_marker("mockbroker")
    return bool(request.config.getoption("kafka_proxy", False) or os.environ.get(ENV_PROXY, "") == "1"
                or (marker is not None and marker.kwargs.get("proxy")))


def skip_if_embedded_only(item: pytest.Item) -> None:
    """Skip a test marked embedded_only on a remote run, saying why."""
    target = remote_bootstrap(item.config)
    if target is not None and item.get_closest_marker(EMBEDDED_ONLY_MARKER) is not None:
        pytest.skip(f"embedded_only: needs the embedded broker; this run targets the Kafka cluster at {target}")
