"""socket.listen.backlog.size (issue 33, item 9): Kafka's setting reaches every listening socket, at start and
when a stopped node binds again, from the Python API, the command's --config and the images' environment.
The accept queue's length is what `ss -ltn` shows as Send-Q of a listening socket (inet_diag)."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from collections.abc import Callable
from typing import Any

import pytest

from mockbroker.envconfig import Flags, build_settings
from mockbroker.server import MockBroker

pytestmark = pytest.mark.adversarial


def kernel_backlog(port: int) -> int | None:
    """The accept queue length the kernel keeps for the socket listening on 127.0.0.1:port (ss's Send-Q)."""
    if shutil.which("ss") is None:
        return None
    out = subprocess.run(["ss", "-Hltn", f"sport = :{port}"], capture_output=True, text=True, timeout=30).stdout
    return int(out.split()[2])


@pytest.fixture
def backlogs(monkeypatch: pytest.MonkeyPatch) -> list[int | None]:
    """The backlog of every create_server call the broker makes."""
    seen: list[int | None] = []
    original = asyncio.BaseEventLoop.create_server

    async def recording(self: asyncio.BaseEventLoop, *args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs.get("backlog"))
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(asyncio.BaseEventLoop, "create_server", recording)
    return seen


def test_the_default_backlog_is_1024_on_every_listener(mockbroker_factory: Callable[..., MockBroker],
                                                        backlogs: list[int | None]) -> None:
    broker = mockbroker_factory(brokers=3)
    assert backlogs == [1024, 1024, 1024]
    assert broker.cluster.config.get("socket.listen.backlog.size") == 1024
    for listener in broker.cluster.listeners:
        assert kernel_backlog(listener.port) in (None, 1024)


def test_the_setting_reaches_the_listen_call_at_start_and_when_a_node_binds_again(
        mockbroker_factory: Callable[..., MockBroker], backlogs: list[int | None]) -> None:
    broker = mockbroker_factory(brokers=2, config={"socket.listen.backlog.size": "77"})
    assert backlogs == [77, 77]
    port = next(lst.port for lst in broker.cluster.listeners if lst.node_id == 2)
    assert kernel_backlog(port) in (None, 77)
    broker.stop_node(2)
    broker.start_node(2)
    assert backlogs == [77, 77, 77]
    assert kernel_backlog(port) in (None, 77)


def test_the_images_environment_and_the_commands_config_flag_set_it() -> None:
    assert build_settings({"KAFKA_SOCKET_LISTEN_BACKLOG_SIZE": "333"}).config["socket.listen.backlog.size"] == "333"
    broker = MockBroker(**build_settings({"KAFKA_SOCKET_LISTEN_BACKLOG_SIZE": "333"}).broker_kwargs())
    assert broker.cluster.config.get("socket.listen.backlog.size") == 333
    flags = Flags(config=["socket.listen.backlog.size=444"])
    assert build_settings({}, flags).config["socket.listen.backlog.size"] == "444"
