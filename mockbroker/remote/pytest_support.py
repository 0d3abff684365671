"""The pytest plugin's side of the remote target: `--kafka-bootstrap HOST:PORT` or the environment variable
MOCKBROKER_KAFKA_BOOTSTRAP makes the `mockbroker` fixture yield a RemoteBroker on that cluster, and
`@pytest.mark.embedded_only` skips a test on such a run (mockbroker/pytest_plugin.py calls these)."""

from __future__ import annotations

import os

import pytest

ENV_BOOTSTRAP = "MOCKBROKER_KAFKA_BOOTSTRAP"
EMBEDDED_ONLY_MARKER = "embedded_only"


def add_option(parser: pytest.Parser) -> None:
    parser.getgroup("mockbroker").addoption(
        "--kafka-bootstrap", default=None, metavar="HOST:PORT",
        help=f"run the mockbroker fixture's tests against this Kafka cluster (also ${ENV_BOOTSTRAP}); "
             f"tests marked {EMBEDDED_ONLY_MARKER} are skipped")


def configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{EMBEDDED_ONLY_MARKER}: the test needs the embedded broker; "
                                       "skipped on a remote run (--kafka-bootstrap)")


def remote_bootstrap(config: pytest.Config) -> str | None:
    """The remote cluster's bootstrap servers of this run, or None (the embedded broker)."""
    given = config.getoption("kafka_bootstrap", None) or os.environ.get(ENV_BOOTSTRAP, "")
    return given or None


def skip_if_embedded_only(item: pytest.Item) -> None:
    """Skip a test marked embedded_only on a remote run, saying why."""
    target = remote_bootstrap(item.config)
    if target is not None and item.get_closest_marker(EMBEDDED_ONLY_MARKER) is not None:
        pytest.skip(f"embedded_only: needs the embedded broker; this run targets the Kafka cluster at {target}")
