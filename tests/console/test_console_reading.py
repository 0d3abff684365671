"""The console as a user reads it, in chromium: the user's topics first with internal ones behind a
remembered switch, binary bytes as hex and text as text, JSON compact until a record is expanded, a
topic's configs on its page, the records table within a phone-wide window, and a dark theme that
follows the system's setting with readable contrast."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from confluent_kafka import Producer

from tests.console.conftest import Console, open_page


def expect(locator: Any) -> Any:
    from playwright.sync_api import expect as pw_expect

    return pw_expect(locator)


def produce(console: Console, topic: str, records: list[tuple[bytes | None, bytes | None]],
            headers: list[tuple[str, bytes]] | None = None) -> None:
    producer = Producer({"bootstrap.servers": console.broker.bootstrap_servers, "linger.ms": 0})
    for key, value in records:
        producer.produce(topic, key=key, value=value, partition=0, headers=headers or [])
    assert producer.flush(30) == 0


def goto_topic(page: Any, console: Console, topic: str) -> Any:
    """Open the topic's page; the rows of its records table, newest first."""
    page.goto(f"{console.url}/#/topic/{topic}")
    expect(page.locator("main h1")).to_have_text(f"Topic {topic}")
    return page.locator("#records tbody tr")


def row_at(page: Any, offset: int) -> Any:
    return page.locator(f"#records tbody tr[data-offset='{offset}']")


def test_internal_topics_are_hidden_until_the_switch_shows_them_and_it_is_remembered(console: Console,
                                                                                     page: Any) -> None:
    for name in ("zeta", "__consumer_offsets", "alpha", "__audit"):
        console.broker.create_topic(name)
    page.goto(f"{console.url}/#/overview")
    first_cells = page.locator("#topics-table tbody tr td:first-child")
    expect(first_cells).to_have_text(["alpha", "zeta"])
    switch = page.get_by_label("Show internal topics")
    expect(switch).not_to_be_checked()
    expect(page.locator("main label.toggle")).to_contain_text("(2)")
    expect(page.locator("#partitions-table")).not_to_contain_text("__consumer_offsets")
    switch.check()
    expect(first_cells).to_have_text(["alpha", "zeta", "__audit", "__consumer_offsets"])  # the user's first
    expect(page.locator("#partitions-table")).to_contain_text("__consumer_offsets")
    page.reload()
    expect(first_cells).to_have_text(["alpha", "zeta", "__audit", "__consumer_offsets"])
    expect(page.get_by_label("Show internal topics")).to_be_checked()
    page.goto(f"{console.url}/#/topics")  # the topic list under Records shares the switch
    expect(page.locator(".topic-list li")).to_have_count(4)
    page.get_by_label("Show internal topics").uncheck()
    expect(page.locator(".topic-list li a")).to_have_text(["alpha", "zeta"])
    page.goto(f"{console.url}/#/overview")
    expect(first_cells).to_have_text(["alpha", "zeta"])


def test_binary_bytes_show_as_hex_and_text_stays_text(console: Console, page: Any) -> None:
    console.broker.create_topic("mixed")
    produce(console, "mixed", [
        (b"plain-key", b"plain text, tab\there"),      # 0: text
        (b"\x01\x02", b"\x00\xff\x10 not utf-8"),        # 1: not UTF-8: hex (the key too: control characters)
        (b"k", b"abc\x07def"),                          # 2: UTF-8 with a control character: hex
        (b"k", b'{"a": [1, 2]}'),                       # 3: JSON
        (b"k", "caf\u00e9 \u2713".encode()),            # 4: non-ASCII text
    ])
    goto_topic(page, console, "mixed")
    text = row_at(page, 0)
    expect(text.locator("td").nth(3)).to_have_text("plain-key")
    expect(text.locator(".value .data")).to_have_text("plain text, tab\there")
    expect(text.locator(".hex")).to_have_count(0)
    binary = row_at(page, 1)
    expect(binary.locator("td").nth(3).locator(".hex")).to_have_text("01 02")
    expect(binary.locator(".value .hex")).to_have_text("00 ff 10 20 6e 6f 74 20 75 74 66 2d 38")
    expect(row_at(page, 2).locator(".value .hex")).to_have_text("61 62 63 07 64 65 66")
    expect(row_at(page, 3).locator(".value .json")).to_have_text('{"a": [1, 2]}')
    expect(row_at(page, 4).locator(".value .text")).to_have_text("caf\u00e9 \u2713")
    binary.get_by_role("button", name="expand").click()  # expanded, binary is a hex dump with offsets
    expect(binary.locator(".value pre.hex")).to_contain_text("00000000  00 ff 10 20 6e 6f 74")
    page.select_option("#f-format", "text")  # asked for text, the control character is text
    expect(row_at(page, 2).locator(".value .text")).to_have_text("abc\x07def")


def test_json_is_compact_on_one_line_until_one_click_expands_the_record(console: Console, page: Any) -> None:
    console.broker.create_topic("orders")
    order = {"order_id": 7, "customer": "c-7", "items": [{"sku": f"sku-{i}", "qty": i} for i in range(12)]}
    produce(console, "orders", [(b"order-%d" % i, json.dumps({**order, "order_id": i}).encode()) for i in range(12)],
            headers=[("trace-id", b"t-1"), ("source", b"web")])
    rows = goto_topic(page, console, "orders")
    expect(rows).to_have_count(12)
    value = row_at(page, 5).locator(".value code.data.json")
    expect(value).to_contain_text('{"order_id": 5, "customer": "c-7", "items": [{"sku": "sku-0", "qty": 0}, ')
    truncated = value.evaluate("el => el.scrollWidth > el.clientWidth && getComputedStyle(el).textOverflow")
    assert truncated == "ellipsis"
    heights = [rows.nth(i).bounding_box()["height"] for i in range(12)]
    assert max(heights) < 2.5 * 15 * 1.4, heights  # one line each: twelve records on one screen
    button = row_at(page, 5).get_by_role("button", name="expand record 0-5")
    expect(button).to_have_attribute("aria-expanded", "false")
    button.click()
    pretty = row_at(page, 5).locator(".value pre.json")
    expect(pretty).to_contain_text('"order_id": 5,\n  "customer": "c-7",\n  "items": [\n    {\n      "sku": "sku-0"')
    expect(row_at(page, 5).get_by_role("button", name="collapse record 0-5")).to_have_attribute("aria-expanded", "true")
    expect(row_at(page, 5).locator(".headers")).to_contain_text("trace-id: t-1")
    expect(row_at(page, 4).locator("pre.json")).to_have_count(0)  # one record only
    produce(console, "orders", [(b"late", b'{"n": 1}')])  # a live redraw keeps the record expanded
    expect(rows).to_have_count(13)
    expect(row_at(page, 5).locator(".value pre.json")).to_contain_text('"order_id": 5')
    row_at(page, 5).get_by_role("button", name="collapse record 0-5").click()
    expect(row_at(page, 5).locator(".value code.data.json")).to_contain_text('{"order_id": 5, ')


def test_a_topic_page_shows_its_configs_set_and_effective(console: Console, page: Any) -> None:
    console.broker.create_topic("accounts", 2, {"cleanup.policy": "compact", "retention.ms": "60000"})
    goto_topic(page, console, "accounts")
    overrides = page.locator("#topic-overrides")
    expect(overrides).to_contain_text("cleanup.policy=compact")
    expect(overrides).to_contain_text("retention.ms=60000")
    page.get_by_text("All 26 effective configs").click()  # as many as DescribeConfigs lists for a topic
    table = page.locator("#all-configs table")
    expect(table.locator("tr.set td:first-child")).to_have_text(["cleanup.policy", "retention.ms"])
    expect(table.locator("tr", has_text="cleanup.policy").locator("td")).to_have_text(
        ["cleanup.policy", "compact", "TOPIC_CONFIG"])
    expect(table.locator("tr", has_text="segment.bytes").locator("td").nth(2)).to_have_text("default")
    console.broker.create_topic("plain")  # a topic with nothing set says so
    goto_topic(page, console, "plain")
    expect(page.locator("#topic-overrides")).to_contain_text("nothing (broker settings and Kafka's defaults apply)")


NO_SIDEWAYS_SCROLL = """() => {
  const table = document.querySelector("#records table");
  const wrap = table.parentElement;
  return [table.scrollWidth, table.clientWidth, wrap.scrollWidth, wrap.clientWidth,
          document.documentElement.scrollWidth, window.innerWidth];
}"""


def test_the_records_table_fits_a_phone_wide_window(console: Console, browser: Any) -> None:
    console.broker.create_topic("wide")
    long_json = json.dumps({"description": "x" * 400, "tags": [f"tag-{i}" for i in range(40)]}).encode()
    produce(console, "wide", [(b"a-rather-long-key-" * 8, long_json), (b"\x00\x01" * 100, b"\xff" * 300),
                              (b"k", b"a long text value without spaces " + b"y" * 300)],
            headers=[("a-long-header-name", b"z" * 200)])
    context, page, errors = open_page(browser, 375, 800)
    try:
        rows = goto_topic(page, console, "wide")
        expect(rows).to_have_count(3)
        sizes = page.evaluate(NO_SIDEWAYS_SCROLL)
        assert sizes[0] <= sizes[1] and sizes[2] <= sizes[3] and sizes[4] <= sizes[5], sizes
        for offset in range(3):  # expanded records (JSON pretty, hex dump, long text) stay inside too
            row_at(page, offset).get_by_role("button", name="expand").click()
            expect(row_at(page, offset)).to_have_class(re.compile(r"\bopen\b"))
        sizes = page.evaluate(NO_SIDEWAYS_SCROLL)
        assert sizes[0] <= sizes[1] and sizes[2] <= sizes[3] and sizes[4] <= sizes[5], sizes
        label = row_at(page, 0).locator("td").nth(4).evaluate("td => getComputedStyle(td, '::before').content")
        assert label == '"value"'  # a stacked cell names its column
    finally:
        context.close()
    assert errors == [], errors


def _luminance(css: str) -> float:
    r, g, b = (int(x) / 255 for x in re.findall(r"\d+", css)[:3])
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def _contrast(a: str, b: str) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


COLOURS = """() => {
  const style = (sel, pseudo) => getComputedStyle(document.querySelector(sel), pseudo || null);
  return {bg: style("body").backgroundColor, fg: style("body").color, link: style("#topics-table a").color,
          muted: style(".facts dt").color, card: style("#topics-table").backgroundColor,
          th: style("#topics-table th").backgroundColor};
}"""


@pytest.mark.parametrize("scheme", ["dark", "light"])
def test_the_theme_follows_the_system_setting_with_readable_contrast(console: Console, browser: Any,
                                                                     scheme: str) -> None:
    console.broker.create_topic("t")
    context, page, errors = open_page(browser, 1280, 800, scheme)
    try:
        page.goto(f"{console.url}/#/overview")
        expect(page.locator("#topics-table")).to_contain_text("t")
        c = page.evaluate(COLOURS)
        assert (_luminance(c["bg"]) < 0.05) == (scheme == "dark"), c
        assert (_luminance(c["card"]) < 0.05) == (scheme == "dark"), c
        for fg, bg in [("fg", "bg"), ("fg", "card"), ("link", "card"), ("muted", "bg"), ("fg", "th")]:
            assert _contrast(c[fg], c[bg]) >= 4.5, (fg, bg, c)  # WCAG AA for text
    finally:
        context.close()
    assert errors == [], errors
