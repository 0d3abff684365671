"""The console's share-group pages in chromium: a real share consumer (confluent-kafka's ShareConsumer,
explicit acknowledgement) holds records; the list shows the group and its records acquired, the group's
page its member with the assignment and each in-flight record ACQUIRED with delivery count 1 and a lock
expiry; when the broker clock runs past the lock the page shows them AVAILABLE again, live."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import ShareConsumer

from tests.console.conftest import WAIT_MS, Console, served_console
from tests.console.test_console_browser import confluent_producer, expect, goto


@pytest.fixture
def share_console() -> Iterator[Console]:
    with served_console(config={"share.auto.offset.reset": "earliest"}) as c:
        yield c


def hold_records(consumer: ShareConsumer, count: int) -> list[int]:
    """Poll an explicit-mode share consumer until it holds `count` records, acknowledging none (their locks
    stay); generous bound, no timing asserted."""
    held: list[int] = []
    deadline = time.monotonic() + 60
    while len(held) < count and time.monotonic() < deadline:
        for m in consumer.poll(0.5) or []:
            assert m.error() is None, m.error()
            held.append(m.offset())
    assert sorted(held) == list(range(count))
    return held


def test_a_share_consumer_s_records_show_acquired_then_available_when_the_lock_runs_out(
        share_console: Console, page: Any) -> None:
    broker = share_console.broker
    broker.create_topic("jobs", 1)
    producer = confluent_producer(share_console)
    for i in range(3):
        producer.produce("jobs", value=b"job-%d" % i, partition=0)
    assert producer.flush(30) == 0
    goto(page, share_console, "share-groups", "Share groups")
    expect(page.locator("#share-groups-table")).to_contain_text("nothing yet")
    consumer = ShareConsumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "pickers",
                              "share.acknowledgement.mode": "explicit"})
    try:
        consumer.subscribe(["jobs"])
        hold_records(consumer, 3)
        [member_id] = broker.share_groups()["pickers"]["members"]
        row = page.locator("#share-groups-table tbody tr").nth(0)
        expect(row.locator("td")).to_have_text(["pickers", "Stable", "1", "1", "1", "3"], timeout=WAIT_MS)
        page.click("#share-groups-table >> text=pickers")
        expect(page.locator("main h1")).to_contain_text("pickers")
        expect(page.locator("#share-members-table tbody tr td").nth(0)).to_have_text(member_id)
        expect(page.locator("#share-members-table")).to_contain_text("jobs: 0")
        expect(page.locator("#share-partitions-table tbody tr td")).to_have_text(
            ["jobs", "0", "0", "3", "3", "0", "3", "0", "0"])
        rows = page.locator("table.share-records tbody tr")
        expect(rows).to_have_count(3)
        expiries = {r["lock_expiry_ms"] for r in broker.share_groups()["pickers"]["partitions"]["jobs-0"]["records"]}
        assert len(expiries) == 1 and None not in expiries
        for offset in range(3):
            cells = rows.nth(offset).locator("td")
            expect(cells.nth(0)).to_have_text(str(offset))
            expect(cells.nth(1)).to_have_text("ACQUIRED")
            expect(cells.nth(2)).to_have_text("1")
            expect(cells.nth(3)).to_have_text(member_id)
            expect(cells.nth(5)).to_have_text(re.compile(r"^\d+ ms$"))
        broker.clock.advance(31)  # past share.record.lock.duration.ms (30 s): the page redraws on the clock
        expect(rows.nth(0).locator("td").nth(1)).to_have_text("AVAILABLE", timeout=WAIT_MS)
        for offset in range(3):
            expect(rows.nth(offset).locator("td")).to_have_text([str(offset), "AVAILABLE", "1", "–", "–", "–"])
        expect(page.locator("#share-partitions-table tbody tr td")).to_have_text(
            ["jobs", "0", "0", "3", "3", "3", "0", "0", "0"])
    finally:
        consumer.close()
