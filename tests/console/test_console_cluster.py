"""The console's node and leader actions on a 3-node cluster, in Chromium: stop and start a node, move a
leader, and a bad request's clear message."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.console.conftest import WAIT_MS, Console, served_console
from tests.console.test_console_browser import goto


@pytest.fixture
def cluster_console() -> Iterator[Console]:
    with served_console(brokers=3) as c:
        yield c


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
