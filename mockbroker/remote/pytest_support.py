"""The pytest plugin's side of the remote target: `--kafka-bootstrap HOST:PORT` or the environment variable
MOCKBROKER_KAFKA_BOOTSTRAP makes the `mockbroker` fixture yield a RemoteBroker on that cluster, and
`@pytest.mark.embedded_only` skips a test on such a run (mockbroker/pytest_plugin.py calls these).

On a remote run each test is isolated by default (mockbroker/remote/naming.py): its names get a per-run,
per-test prefix, and its topics and groups are deleted at teardown, what could not be deleted reported as
an IsolationCleanupWarning. `--kafka-isolation=off` (or MOCKBROKER_KAFKA_ISOLATION=off) turns that off for
the run, `@pytest.mark.mockbroker(isolate=False)` for one test. The connection's security comes from
`--kafka-config KEY=VALUE` (repeatable) over `--kafka-config-file PATH` (or MOCKBROKER_KAFKA_CONFIG_FILE),
in librdkafka's or Java's property names (mockbroker/remote/security.py).

`--kafka-proxy` (or MOCKBROKER_KAFKA_PROXY=1, or a test's @pytest.mark.mockbroker(proxy=True)) puts the fault
proxy in front of the cluster (mockbroker/remote/proxy.py)."""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Iterator

import pytest

from mockbroker.remote.broker import RemoteBroker
from mockbroker.remote.naming import new_run_id, prefix_for
from mockbroker.remote.security import client_security, parse_setting, read_properties

ENV_BOOTSTRAP = "MOCKBROKER_KAFKA_BOOTSTRAP"
ENV_ISOLATION = "MOCKBROKER_KAFKA_ISOLATION"
ENV_CONFIG_FILE = "MOCKBROKER_KAFKA_CONFIG_FILE"
ENV_PROXY = "MOCKBROKER_KAFKA_PROXY"  # "1": the fault proxy, as --kafka-proxy
EMBEDDED_ONLY_MARKER = "embedded_only"
RUN_ID_KEY = pytest.StashKey[str]()


class IsolationCleanupWarning(UserWarning):
    """Some of an isolated test's topics or groups could not be deleted from the cluster at teardown."""


def add_option(parser: pytest.Parser) -> None:
    group = parser.getgroup("mockbroker")
    group.addoption(
        "--kafka-bootstrap", default=None, metavar="HOST:PORT",
        help=f"run the mockbroker fixture's tests against this Kafka cluster (also ${ENV_BOOTSTRAP}); "
             f"tests marked {EMBEDDED_ONLY_MARKER} are skipped")
    group.addoption(
        "--kafka-isolation", default=None, choices=["on", "off"],
        help=f"on (the default): each test's topics, groups and transactional ids are prefixed per run and "
             f"test on the cluster, and deleted at teardown; off: the names the test gives (also ${ENV_ISOLATION})")
    group.addoption(
        "--kafka-config", action="append", default=[], metavar="KEY=VALUE",
        help="a connection setting for the cluster in librdkafka/Java names (security.protocol, ssl.ca.location, "
             "sasl.mechanism, sasl.username, sasl.password...); repeatable")
    group.addoption(
        "--kafka-config-file", default=None, metavar="PATH",
        help=f"a properties file of such settings (also ${ENV_CONFIG_FILE}); --kafka-config wins")
    group.addoption(
        "--kafka-proxy", action="store_true", default=False,
        help=f"with --kafka-bootstrap: run the fault proxy (mockbroker/remote/proxy.py) in front of the cluster, "
             f"so inject/received/clear_faults work and clients bootstrap from it (also ${ENV_PROXY}=1)")


def configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{EMBEDDED_ONLY_MARKER}: the test needs the embedded broker; "
                                       "skipped on a remote run (--kafka-bootstrap)")
    if remote_bootstrap(config) is not None:  # bad settings stop the run once, before any test
        try:
            client_security(remote_config(config))
        except (ValueError, OSError) as exc:
            raise pytest.UsageError(f"the Kafka cluster's settings (--kafka-config, --kafka-config-file): {exc}") from None


def remote_bootstrap(config: pytest.Config) -> str | None:
    """The remote cluster's bootstrap servers of this run, or None (the embedded broker)."""
    given = config.getoption("kafka_bootstrap", None) or os.environ.get(ENV_BOOTSTRAP, "")
    return given or None


def remote_config(config: pytest.Config) -> dict[str, str]:
    """The cluster's connection settings of this run: the properties file, then each --kafka-config."""
    path = config.getoption("kafka_config_file", None) or os.environ.get(ENV_CONFIG_FILE, "")
    out = read_properties(path) if path else {}
    out.update(parse_setting(text) for text in config.getoption("kafka_config", None) or [])
    return out


def isolates(request: pytest.FixtureRequest) -> bool:
    """Whether this test is isolated: its mockbroker marker's isolate=, else the run's setting (default on)."""
    marker = request.node.get_closest_marker("mockbroker")
    if marker is not None and "isolate" in marker.kwargs:
        return bool(marker.kwargs["isolate"])
    given = request.config.getoption("kafka_isolation", None) or os.environ.get(ENV_ISOLATION, "on")
    if given.lower() not in ("on", "off"):
        raise pytest.UsageError(f"{ENV_ISOLATION}={given!r}: on or off")
    return given.lower() == "on"


@contextlib.contextmanager
def remote_target(request: pytest.FixtureRequest, bootstrap: str) -> Iterator[RemoteBroker]:
    """The mockbroker fixture on a remote run: a RemoteBroker on the cluster, isolated unless turned off,
    the test's topics and groups deleted after it (failures warned of, never failing the test)."""
    prefix = ""
    if isolates(request):
        config = request.config
        if RUN_ID_KEY not in config.stash:
            config.stash[RUN_ID_KEY] = new_run_id()
        prefix = prefix_for(config.stash[RUN_ID_KEY], request.node.nodeid)
    with RemoteBroker(bootstrap, prefix=prefix, config=remote_config(request.config),
                      proxy=wants_proxy(request)) as target:
        try:
            yield target
        finally:
            problems = target.cleanup()
            if problems:
                warnings.warn(IsolationCleanupWarning(
                    f"{request.node.nodeid}: left on the cluster at {bootstrap}: " + "; ".join(problems)),
                    stacklevel=1)
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
