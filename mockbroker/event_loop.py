"""Which event loop the `mockbroker` command runs on: uvloop's when it is installed, else asyncio's own.

Only where mockbroker owns the loop: the `mockbroker` command, `python -m mockbroker` and the image (all
through mockbroker/cli.py). The pytest fixtures, MockBroker.start() and MockBroker.run_in_thread() run on
whatever loop they are given or asyncio creates: mockbroker never sets a loop policy.

uvloop (libuv's loop, the `fast` extra: `pip install 'mockbroker[fast]'`) takes less CPU per wake-up, read
and write than asyncio's selector loop, which shows in the round trip of small requests. The choice:
`--loop` (auto, uvloop, asyncio), else MOCKBROKER_LOOP, else auto: uvloop when it imports, asyncio
otherwise. `uvloop` asked for and not installed is an error naming the extra; `asyncio` never imports it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, TypeVar

from mockbroker.envparsers import ConfigError

ENV = "MOCKBROKER_LOOP"
CHOICES = ("auto", "uvloop", "asyncio")
T = TypeVar("T")
LoopFactory = Callable[[], asyncio.AbstractEventLoop]


def choose(flag: str | None, env: Mapping[str, str]) -> str:
    """The loop asked for: the --loop flag, else MOCKBROKER_LOOP (blank: not given), else auto."""
    value = flag if flag is not None else (env.get(ENV) or "").strip().lower() or "auto"
    if value not in CHOICES:
        raise ConfigError(f"{ENV}={value!r}: the event loop must be one of {', '.join(CHOICES)}")
    return value


def loop_factory(choice: str) -> LoopFactory | None:
    """uvloop's loop factory for `choice`, or None for asyncio's default loop. ConfigError when uvloop is asked
    for and not installed."""
    if choice == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        if choice == "uvloop":
            raise ConfigError("the uvloop event loop needs uvloop: pip install 'mockbroker[fast]' "
                              f"(or --loop asyncio / {ENV}=asyncio)") from None
        return None
    factory: LoopFactory = uvloop.new_event_loop
    return factory


def loop_name(loop: asyncio.AbstractEventLoop) -> str:
    """"uvloop" or "asyncio": what a running loop is (for the log and the tests)."""
    return "uvloop" if type(loop).__module__.startswith("uvloop") else "asyncio"


def run(main: Coroutine[Any, Any, T], factory: LoopFactory | None) -> T:
    """asyncio.run(main) on a loop from `factory` (None: asyncio's own); no loop policy is set."""
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)
