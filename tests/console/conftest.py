"""The browser tier: the web console in Debian's chromium, driven by Playwright for Python.

Playwright's own browsers cannot be downloaded here, so it launches /usr/bin/chromium (installed by
scripts/install-test-deps); never `playwright install`. Without chromium or playwright the tests skip,
or fail under MOCKBROKER_REQUIRE_INTEROP=1 (as CI runs). Every page a test opens is watched: a console
error or an uncaught exception fails the test.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from mockbroker.http import ControlServer
from mockbroker.server import MockBroker

CHROMIUM = os.environ.get("MOCKBROKER_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WAIT_MS = 60_000  # generous: two shared cores


def _unavailable() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[test]')"
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        return f"no chromium at {CHROMIUM} (apt-get install chromium)"
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "browser" in getattr(item, "fixturenames", ()) or "page" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)


@dataclass
class Console:
    broker: MockBroker
    control: ControlServer

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.control.port}"


@contextlib.contextmanager
def served_console(**broker_kwargs: Any) -> Iterator[Console]:
    """A broker in its own thread (MockBroker(**broker_kwargs)) with the HTTP endpoint on a free port."""
    with MockBroker(port=0, **broker_kwargs).run_in_thread() as broker:
        assert broker._loop is not None
        control = asyncio.run_coroutine_threadsafe(ControlServer(broker).start("127.0.0.1", 0), broker._loop).result(30)
        try:
            yield Console(broker, control)
        finally:
            asyncio.run_coroutine_threadsafe(control.stop(), broker._loop).result(30)


@pytest.fixture
def console() -> Iterator[Console]:
    with served_console() as c:
        yield c


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Chromium for one test module. Not for the session: Playwright's sync API keeps an event loop
    running in this thread while it is open, which later pytest-asyncio tests cannot share."""
    reason = _unavailable()
    if reason is not None:
        if os.environ.get("MOCKBROKER_REQUIRE_INTEROP") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, timeout=WAIT_MS)
        try:
            yield b
        finally:
            b.close()


def open_page(browser: Any, width: int = 1280, height: int = 800,
              color_scheme: str = "light") -> tuple[Any, Any, list[str]]:
    """(context, page, errors): a fresh page whose console errors and uncaught exceptions land in errors;
    color_scheme is what the page's prefers-color-scheme reports ("light" or "dark")."""
    context = browser.new_context(viewport={"width": width, "height": height}, color_scheme=color_scheme)
    context.set_default_timeout(WAIT_MS)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(f"console {msg.type}: {msg.text}") if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(f"uncaught: {exc}"))
    return context, page, errors


@pytest.fixture
def page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A 1280x800 page; console errors fail the test, except for the browser's own note of a 4xx answer
    in a test marked expect_4xx (one that sends bad input on purpose)."""
    context, page, errors = open_page(browser)
    try:
        yield page
        if request.node.get_closest_marker("expect_4xx"):
            errors = [e for e in errors if not re.search(r"Failed to load resource: .* status of 4\d\d", e)]
        assert errors == [], errors
    finally:
        context.close()
