"""The console's node and leader actions on a 3-node cluster, in Chromium: stop and start a node, move a
leader, and a bad request's clear message."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from mockbroker.control_http import ControlServer
from mockbroker.server import MockBroker
from tests.console.conftest import WAIT_MS, Console
from tests.console.test_console_browser import goto


@pytest.fixture
def cluster_console() -> Iterator[Console]:
    with MockBroker(brokers=3).run_in_thread() as broker:
        assert broker._loop is not None
        control = asyncio.run_coroutine_threadsafe(ControlServer(broker).start("127.0.0.1", 0), broker._loop).result(30)
        try:
            yield Console(broker, control)
        finally:
            asyncio.run_coroutine_threadsafe(control.stop(), broker._loop).result(30)


@pytest.mark.expect_4xx
def test_nodes_stop_and_start_and_a_leader_moves_from_the_actions_page(cluster_console: Console, page: Any) -> None:
    from playwright.sync_api import expect

    broker = cluster_console.broker
    broker.create_topic("ledger", assignments=[[1, 2, 3]])
    goto(page, cluster_console, "actions", "Actions")
    expect(page.locator("#node-list")).to_contain_text("node 3: running", timeout=WAIT_MS)

    def submit(form: str, fields: dict[str, str], expected: str) -> None:
        for label, value in fields.items():
            page.locator(f"#{form}").get_by_label(label, exact=True).fill(value)
        page.locator(f"#{form} button[type=submit]").click()
        expect(page.locator(f"#{form} ~ .output")).to_contain_text(expected, timeout=WAIT_MS)

    submit("move-leader", {"Topic": "ledger", "Partition": "0", "To node": "2"},
           "ledger-0 is led by node 2, leader epoch 1; ISR 1, 2, 3.")
    assert broker.partition_state("ledger", 0).leader == 2
    submit("stop-node", {"Node": "2"}, "Node 2 is stopped.")
    expect(page.locator("#node-list")).to_contain_text("node 2: stopped")
    assert [n.alive for n in broker.nodes()] == [True, False, True]
    assert broker.partition_state("ledger", 0).leader in (1, 3)
    submit("move-leader", {"Topic": "ledger", "Partition": "0", "To node": "2"}, "Move a leader failed:")
    submit("start-node", {"Node": "2"}, "Node 2 is running.")
    expect(page.locator("#node-list")).to_contain_text("node 2: running")
    submit("stop-node", {"Node": "9"}, "Stop a node failed: no node 9")
