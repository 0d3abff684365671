"""The web console in chromium: every page loads without console errors (wide and narrow), records a
real client produces appear live, groups of a real consumer show members and lag, each action shows its
result, and bad input in a form or a filter gets a clear message."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer

from tests.console.conftest import WAIT_MS, Console, open_page

SECTIONS = [("overview", "Overview"), ("topics", "Records"), ("producers", "Producers"),
            ("transactions", "Transactions"), ("groups", "Consumer groups"), ("share-groups", "Share groups"),
            ("actions", "Actions"),
            ("requests", "Request log")]


# Markup checks on each page: every form control has a label, every table a caption and column headers
# with a scope, one h1, no image without alt text.
A11Y_PROBLEMS = """() => {
  const problems = [];
  for (const el of document.querySelectorAll("input, select, textarea")) {
    if (!el.labels || el.labels.length === 0) problems.push(`unlabelled ${el.tagName} ${el.name}`);
  }
  for (const t of document.querySelectorAll("table")) {
    if (!t.querySelector("caption")) problems.push("table without caption");
    for (const th of t.querySelectorAll("th")) if (th.getAttribute("scope") !== "col") problems.push("th without scope");
  }
  if (document.querySelectorAll("h1").length !== 1) problems.push("not exactly one h1");
  for (const img of document.querySelectorAll("img")) if (!img.hasAttribute("alt")) problems.push("img without alt");
  return problems;
}"""


def expect(locator: Any) -> Any:
    from playwright.sync_api import expect as pw_expect

    return pw_expect(locator)


def goto(page: Any, console: Console, route: str, heading: str) -> None:
    page.goto(f"{console.url}/#/{route}")
    expect(page.locator("main h1")).to_contain_text(heading, timeout=WAIT_MS)


def confluent_producer(console: Console) -> Producer:
    return Producer({"bootstrap.servers": console.broker.bootstrap_servers, "enable.idempotence": True,
                     "linger.ms": 0})


@pytest.mark.parametrize("width,height", [(1280, 800), (400, 800)])
def test_every_page_loads_without_console_errors(console: Console, browser: Any, width: int, height: int) -> None:
    console.broker.create_topic("orders", 2)
    producer = confluent_producer(console)
    producer.produce("orders", key=b"k", value=b'{"qty": 1}', partition=1, headers=[("trace", b"t-1")])
    assert producer.flush(30) == 0
    context, page, errors = open_page(browser, width, height)
    try:
        for route, heading in [*SECTIONS, ("topic/orders", "Topic"), ("batches/orders/1", "Batches of")]:
            goto(page, console, route, heading)
            expect(page.locator("nav a[aria-current=page]")).to_have_count(1)
            page.wait_for_selector("main table:visible, main form:visible, main ul:visible")
            assert page.evaluate(A11Y_PROBLEMS) == [], route
        # a browser asking for / gets the console, curl gets JSON
        page.goto(console.url + "/")
        expect(page.locator("main h1")).to_have_text("Overview")
        expect(page.locator("#topics-table")).to_contain_text("orders")
        no_overflow = page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
        assert no_overflow, "the page scrolls sideways"
    finally:
        context.close()
    assert errors == [], errors


def test_records_of_a_real_producer_appear_live_newest_first(console: Console, page: Any) -> None:
    console.broker.create_topic("live", 2)
    goto(page, console, "topic/live", "Topic")
    expect(page.locator("#live")).to_have_text("live")
    rows = page.locator("#records tbody tr")
    expect(rows).to_contain_text(["nothing yet"])
    producer = confluent_producer(console)
    for i in range(3):
        producer.produce("live", key=f"key-{i}".encode(), value=f'{{"n": {i}}}'.encode(), partition=i % 2)
    assert producer.flush(30) == 0
    expect(rows).to_have_count(3, timeout=WAIT_MS)
    first = rows.nth(0)
    expect(first).to_contain_text("key-2")
    expect(first.locator("code.data.json")).to_have_text('{"n": 2}')  # compact until expanded
    producer.produce("live", key=b"key-3", value=b"\x00\xff binary", partition=1)
    assert producer.flush(30) == 0
    expect(rows.nth(0)).to_contain_text("key-3", timeout=WAIT_MS)
    expect(rows.nth(0).locator(".hex")).to_contain_text("00 ff 20 62")  # not UTF-8: shown as hex

    page.select_option("#f-partition", "0")
    page.click("form[role=search] button[type=submit]")
    expect(rows).to_have_count(2)
    page.fill("#f-key", "key-2")
    page.click("form[role=search] button[type=submit]")
    expect(rows).to_have_count(1)
    expect(rows.nth(0)).to_contain_text("key-2")


def test_paging_goes_older_and_back(console: Console, page: Any) -> None:
    console.broker.create_topic("paged")
    producer = confluent_producer(console)
    for i in range(45):
        producer.produce("paged", key=b"k%02d" % i, value=b"v")
    assert producer.flush(30) == 0
    goto(page, console, "topic/paged", "Topic")
    page.select_option("#f-limit", "20")
    page.click("form[role=search] button[type=submit]")
    rows = page.locator("#records tbody tr")
    expect(rows.nth(0)).to_contain_text("k44")
    page.click("text=Older")
    expect(rows.nth(0)).to_contain_text("k24")
    page.click("text=Older")
    expect(rows).to_have_count(5)
    expect(rows.nth(4)).to_contain_text("k00")
    expect(page.locator("text=Older")).to_be_disabled()
    page.click("text=Newer")
    expect(rows.nth(0)).to_contain_text("k24")


def test_batches_show_producer_fields_and_raw_bytes_on_demand(console: Console, page: Any) -> None:
    console.broker.create_topic("b")
    producer = confluent_producer(console)
    producer.produce("b", key=b"k", value=b"hello-bytes")
    assert producer.flush(30) == 0
    [batch] = console.broker.batches("b")
    goto(page, console, "batches/b/0", "Batches of")
    row = page.locator("table.batches tbody tr").nth(0)
    expect(row).to_contain_text(f"{batch.producer_id} / {batch.producer_epoch}")
    expect(row).to_contain_text("0–0")
    row.get_by_role("button", name="show bytes").click()
    raw = page.locator("table.batches tr.raw-row pre.hex")
    expect(raw).to_contain_text("68 65 6c 6c 6f")  # "hello" inside the stored batch
    assert raw.inner_text().startswith("00000000  00 00 00 00 00 00 00 00")  # base offset 0


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_a_real_consumer_group_shows_members_and_lag_live(console: Console, page: Any, protocol: str) -> None:
    console.broker.create_topic("work", 2)
    producer = confluent_producer(console)
    for i in range(6):
        producer.produce("work", value=b"job-%d" % i, partition=i % 2)
    assert producer.flush(30) == 0
    goto(page, console, "groups", "Consumer groups")
    config = {"bootstrap.servers": console.broker.bootstrap_servers, "group.id": "workers",
              "auto.offset.reset": "earliest", "enable.auto.commit": False}
    if protocol == "consumer":  # KIP-848
        config["group.protocol"] = "consumer"
    consumer = Consumer(config)
    try:
        consumer.subscribe(["work"])
        got = 0
        deadline = time.monotonic() + 60
        while got < 4 and time.monotonic() < deadline:  # 4 of the 6 records: some lag is left
            msg = consumer.poll(1.0)
            if msg is not None and msg.error() is None:
                got += 1
        assert got == 4
        consumer.commit(asynchronous=False)
        expect(page.locator("#groups-table")).to_contain_text("workers", timeout=WAIT_MS)
        row = page.locator("#groups-table tbody tr").nth(0)
        expect(row).to_contain_text("Stable")
        expect(row.locator("td").nth(1)).to_have_text(protocol)
        page.click("#groups-table >> text=workers")
        expect(page.locator("main h1")).to_contain_text("workers")
        expect(page.locator("main")).to_contain_text("work: 0, 1")
        lag = page.locator("#lag-table tbody tr")
        expect(lag).to_have_count(2, timeout=WAIT_MS)
        committed = console.broker.committed("workers")
        assert sorted(committed) == [("work", 0), ("work", 1)]
        for (topic, partition), offset in sorted(committed.items()):
            cells = lag.nth(partition).locator("td")
            expect(cells).to_have_text([topic, str(partition), str(offset), "3", str(3 - offset)])
    finally:
        consumer.close()


def test_each_action_works_and_shows_its_result(console: Console, page: Any) -> None:
    goto(page, console, "actions", "Actions")

    def submit(form: str, fields: dict[str, str], expected: str) -> None:
        for label, value in fields.items():
            page.locator(f"#{form}").get_by_label(label, exact=True).fill(value)
        page.locator(f"#{form} button[type=submit]").click()
        expect(page.locator(f"#{form} ~ .output")).to_contain_text(expected)

    submit("create-topic", {"Name": "made", "Partitions": "2", "Config": "cleanup.policy=compact"},
           "Created topic made with 2 partition(s).")
    assert console.broker.topics() == ["made"]
    submit("produce", {"Topic": "made", "Partition": "1", "Key": "k1", "Value": "first",
                       "Headers": "trace=abc"}, "Appended to made-1 at offset 0.")
    submit("produce", {"Topic": "made", "Partition": "1", "Key": "k1", "Value": "second", "Headers": ""},
           "Appended to made-1 at offset 1.")
    [first, second] = console.broker.records("made", 1)
    assert (first.key, first.value, first.headers, second.value) == (b"k1", b"first", [("trace", b"abc")], b"second")
    submit("compact", {"Topic": "made", "Partition": "1"}, "Compacted made")
    submit("retention", {"Topic": "made"}, "Retention deleted")
    before = console.broker.clock.now_ms()
    submit("advance", {"Seconds": "3600"}, "The broker clock moved 3600 s")
    assert console.broker.clock.now_ms() - before >= 3_600_000
    expect(page.locator("#clock")).not_to_have_text("–")

    page.locator("#add-fault").get_by_label("API", exact=True).select_option("Produce")
    submit("add-fault", {"Error code or delay": "NOT_LEADER_OR_FOLLOWER", "Count": "2", "Topic": "made"},
           "Added: Produce error NOT_LEADER_OR_FOLLOWER.")
    expect(page.locator("#fault-list")).to_contain_text("Produce (0): error NOT_LEADER_OR_FOLLOWER, 2 left, topic made")
    assert len(console.broker.faults.rules) == 1
    submit("clear-faults", {}, "Cleared 1 rule(s).")
    expect(page.locator("#fault-list")).to_contain_text("No fault rules waiting.")
    submit("delete-topic", {"Name": "made"}, "Deleted topic made.")
    assert console.broker.topics() == []


@pytest.mark.expect_4xx
@pytest.mark.parametrize("form,fields,expected", [
    ("create-topic", {"Name": "x", "Partitions": "zero"}, 'Create a topic failed: partitions must be a number, got "zero"'),
    ("create-topic", {"Name": "x", "Partitions": "0"}, "Create a topic failed: partitions must be >= 1, got 0"),
    ("create-topic", {"Name": "", "Partitions": ""}, "Create a topic failed: Topic name is illegal, it can't be empty"),
    ("create-topic", {"Name": "bad name!"}, "Create a topic failed:"),
    ("create-topic", {"Name": "x", "Config": "no-equals-sign"}, 'config: "no-equals-sign" is not key=value'),
    ("produce", {"Topic": "missing", "Value": "v"}, "Produce a record failed: no topic 'missing'"),
    ("produce", {"Topic": "here", "Partition": "9", "Value": "v"}, "has partitions 0..0, not 9"),
    ("advance", {"Seconds": "-5"}, "seconds must be a finite number >= 0, got -5"),
    ("advance", {"Seconds": "soon"}, 'seconds must be a number, got "soon"'),
    ("add-fault", {"Error code or delay": "NO_SUCH_ERROR"}, "unknown error code 'NO_SUCH_ERROR'"),
    ("delete-topic", {"Name": "missing"}, "Delete a topic failed: no topic 'missing'"),
])
def test_bad_form_input_gets_a_clear_message(console: Console, page: Any, form: str, fields: dict[str, str],
                                             expected: str) -> None:
    console.broker.create_topic("here")
    goto(page, console, "actions", "Actions")
    for label, value in fields.items():
        page.locator(f"#{form}").get_by_label(label, exact=True).fill(value)
    page.locator(f"#{form} button[type=submit]").click()
    alert = page.locator(f"#{form} ~ .output [role=alert]")
    expect(alert).to_contain_text(expected)
    assert console.broker.topics() == ["here"]


@pytest.mark.expect_4xx
def test_a_bad_filter_gets_a_clear_message(console: Console, page: Any) -> None:
    console.broker.create_topic("f")
    goto(page, console, "topic/f", "Topic")
    page.fill("#f-offset", "ten")
    page.click("form[role=search] button[type=submit]")
    expect(page.locator("#records [role=alert]")).to_contain_text(
        "Cannot show records: query parameter offset='ten' is not an integer")


def test_the_request_log_is_live(console: Console, page: Any) -> None:
    console.broker.create_topic("r")
    goto(page, console, "requests", "Request log")
    producer = Producer({"bootstrap.servers": console.broker.bootstrap_servers, "client.id": "log-watcher"})
    producer.produce("r", value=b"v")
    assert producer.flush(30) == 0
    table = page.locator("#requests-table tbody")
    expect(table).to_contain_text("log-watcher", timeout=WAIT_MS)
    expect(table).to_contain_text("Produce (0)")
    page.fill("#request-filter", "produce (0)")
    visible = page.locator("#requests-table tbody tr:visible")
    expect(visible.first).to_contain_text("Produce (0)")
    assert all("Produce (0)" in text for text in visible.all_inner_texts())
    producer.produce("r", value=b"v2")
    assert producer.flush(30) == 0
    expect(visible).to_have_count(2, timeout=WAIT_MS)  # new rows obey the filter too


def test_an_open_transaction_shows_its_partitions_and_time_left_then_commits(console: Console, page: Any) -> None:
    console.broker.create_topic("tx", 2)
    goto(page, console, "transactions", "Transactions")
    producer = Producer({"bootstrap.servers": console.broker.bootstrap_servers, "transactional.id": "tx-1",
                         "transaction.timeout.ms": 60000})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce("tx", value=b"in-txn", partition=1)
    assert producer.flush(30) == 0
    row = page.locator("main table tbody tr").nth(0)
    expect(row.locator("td").nth(0)).to_have_text("tx-1", timeout=WAIT_MS)
    expect(row.locator("td").nth(1)).to_have_text("Ongoing", timeout=WAIT_MS)
    expect(row.locator("td").nth(5)).to_contain_text("tx-1", timeout=WAIT_MS)
    expect(row.locator("td").nth(4)).to_have_text(re.compile(r"^\d+ ms$"))
    goto(page, console, "topic/tx", "Topic")  # the open transaction's record is there, flagged
    expect(page.locator("#records tbody tr").nth(0)).to_contain_text("in-txn")
    producer.commit_transaction(30)
    goto(page, console, "transactions", "Transactions")
    expect(row.locator("td").nth(1)).to_have_text("CompleteCommit", timeout=WAIT_MS)
    expect(row.locator("td").nth(4)).to_have_text("–")


def test_the_overview_charts_bytes_and_requests_live(console: Console, page: Any) -> None:
    console.broker.create_topic("charted")
    goto(page, console, "overview", "Overview")
    charts = page.locator("#metrics-charts figure svg polyline")
    expect(charts).to_have_count(3)
    producer = confluent_producer(console)
    deadline = time.monotonic() + 60
    requests = page.locator('#metrics-charts [data-metric="requests"]')
    bytes_in = page.locator('#metrics-charts [data-metric="bytes_in"]')
    while time.monotonic() < deadline:  # keep traffic going until a sample shows it (no timing asserted)
        producer.produce("charted", b"x" * 500)
        producer.flush(30)
        if bytes_in.inner_text() not in ("–", "0 B") and requests.inner_text() not in ("–", "0.0"):
            break
        page.wait_for_timeout(200)
    assert bytes_in.inner_text() not in ("–", "0 B")
    assert page.locator("#metrics-charts polyline").first.get_attribute("points")
