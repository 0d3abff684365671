"""The `mockbroker` command's event loop (mockbroker/event_loop.py): uvloop when installed, --loop / MOCKBROKER_LOOP
to choose, and never a loop policy changed."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import types

import pytest

from mockbroker import cli, event_loop
from mockbroker.envparsers import ConfigError
from tests.rawclient import RawClient


class MarkedLoop(asyncio.SelectorEventLoop):
    """What a stand-in uvloop module makes: asyncio's loop, recognisable."""


def fake_uvloop(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("uvloop")
    module.new_event_loop = MarkedLoop  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "uvloop", module)


def no_uvloop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # import uvloop raises ImportError


def test_the_flag_wins_over_the_environment_and_auto_is_the_default() -> None:
    assert event_loop.choose(None, {}) == "auto"
    assert event_loop.choose(None, {"MOCKBROKER_LOOP": ""}) == "auto"
    assert event_loop.choose(None, {"MOCKBROKER_LOOP": " AsyncIO "}) == "asyncio"
    assert event_loop.choose("uvloop", {"MOCKBROKER_LOOP": "asyncio"}) == "uvloop"
    with pytest.raises(ConfigError, match="MOCKBROKER_LOOP='trio'.*auto, uvloop, asyncio"):
        event_loop.choose(None, {"MOCKBROKER_LOOP": "trio"})


def test_auto_and_uvloop_use_uvloop_when_it_imports(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_uvloop(monkeypatch)
    assert event_loop.loop_factory("auto") is MarkedLoop
    assert event_loop.loop_factory("uvloop") is MarkedLoop
    assert event_loop.loop_factory("asyncio") is None


def test_without_uvloop_auto_is_asyncio_and_uvloop_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    no_uvloop(monkeypatch)
    assert event_loop.loop_factory("auto") is None
    assert event_loop.loop_factory("asyncio") is None
    with pytest.raises(ConfigError, match=r"pip install 'mockbroker\[fast\]'"):
        event_loop.loop_factory("uvloop")


def test_run_uses_the_factory_and_leaves_the_loop_policy_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_uvloop(monkeypatch)
    policy = asyncio.get_event_loop_policy()

    async def which() -> type:
        return type(asyncio.get_running_loop())

    assert event_loop.run(which(), event_loop.loop_factory("auto")) is MarkedLoop
    assert event_loop.run(which(), event_loop.loop_factory("asyncio")) is not MarkedLoop
    assert asyncio.get_event_loop_policy() is policy


def test_the_command_refuses_uvloop_when_it_is_not_installed(monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    no_uvloop(monkeypatch)
    assert cli.main(["--port", "0", "--loop", "uvloop"]) == 2
    assert "mockbroker[fast]" in capsys.readouterr().err
    monkeypatch.setenv("MOCKBROKER_LOOP", "uvloop")
    assert cli.main(["--port", "0"]) == 2
    assert "mockbroker[fast]" in capsys.readouterr().err


def test_the_command_refuses_an_unknown_loop(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["--port", "0", "--loop", "trio"])
    assert exc.value.code == 2
    assert "event loop" in capsys.readouterr().err


def serve_and_ask(loop: str, env: dict[str, str] | None = None) -> str:
    """Start the command with --loop `loop`, answer a Metadata; the loop it logged."""
    args = [] if loop == "" else ["--loop", loop]
    proc = subprocess.Popen([sys.executable, "-m", "mockbroker", "--port", "0", "--topic", "t", "--log-level", "INFO",
                             *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("mockbroker listening on "), line
        host, _, port = line.split()[3].rpartition(":")
        with RawClient(host, int(port)) as c:
            meta = c.request(3, 12, {"topics": None})
            assert [t.name for t in meta.topics] == ["t"]
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    assert proc.stderr is not None
    logged = [ln for ln in proc.stderr.read().splitlines() if "event loop:" in ln]
    assert len(logged) == 1, logged
    return logged[0].rsplit(" ", 1)[1]


def test_the_command_on_asyncio_when_asked() -> None:
    assert serve_and_ask("asyncio") == "asyncio"
    assert serve_and_ask("", {"MOCKBROKER_LOOP": "asyncio"}) == "asyncio"


def test_the_command_on_uvloop_when_installed() -> None:
    pytest.importorskip("uvloop")
    assert serve_and_ask("") == "uvloop"
    assert serve_and_ask("uvloop") == "uvloop"
