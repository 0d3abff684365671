"""Takes the console screenshots in docs/ (the README shows them): a broker fed by real clients
(confluent-kafka: keyed JSON records with headers, one binary record, a consumer group, a transaction),
each main page at 1280x800 in the light theme, a topic's page with one record expanded, the records at
375 px wide (a phone), and the overview and a topic's page in the dark theme.

    .venv/bin/python -m tests.console.screenshots [--out docs]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path
from typing import NamedTuple

from confluent_kafka import Consumer, Producer

from mockbroker.http import ControlServer
from mockbroker.server import MockBroker
from tests.console.conftest import CHROMIUM, CHROMIUM_ARGS, WAIT_MS, open_page


class Shot(NamedTuple):
    name: str
    route: str
    width: int = 1280
    scheme: str = "light"
    click: str | None = None  # the accessible name of a button to press first (its first match)
    shows: str = "main table tbody tr:visible, main form:visible"  # on the page before the picture


SHOTS = [Shot("overview", "#/overview"),
         Shot("records", "#/topic/orders", click="expand record 1-7", shows="main tr.open pre.json"),
         Shot("batches", "#/batches/orders/1", click="show bytes", shows="pre.hex"),
         Shot("group", "#/group/billing"), Shot("actions", "#/actions"), Shot("requests", "#/requests"),
         Shot("records-narrow", "#/topic/orders", width=375),
         Shot("overview-dark", "#/overview", scheme="dark"),
         Shot("records-dark", "#/topic/orders", scheme="dark")]


def feed(broker: MockBroker) -> Consumer:
    """Fill the broker; the consumer it returns stays in its group until closed."""
    broker.create_topic("orders", 3, {"retention.ms": "604800000"})
    broker.create_topic("customers", 1, {"cleanup.policy": "compact"})
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "enable.idempotence": True,
                         "compression.type": "lz4", "client.id": "checkout-service"})
    for i in range(24):
        order = {"order_id": 1000 + i, "customer": f"c-{i % 5}", "items": [{"sku": f"sku-{i % 7}", "qty": 1 + i % 3}],
                 "total": round(9.99 * (1 + i % 4), 2)}
        producer.produce("orders", key=f"order-{1000 + i}".encode(), value=json.dumps(order).encode(),
                         partition=i % 3, headers=[("trace-id", f"t-{i:04x}".encode()), ("source", b"web")])
        producer.produce("customers", key=f"c-{i % 5}".encode(), value=json.dumps({"name": f"Customer {i % 5}"}).encode())
    # a record in Confluent's Avro wire format (magic 0, schema id 7, then Avro): binary, shown as hex
    producer.produce("orders", key=b"order-1024", value=b"\x00\x00\x00\x00\x07\xc0\x0f\x06c-4\x02\x0csku-3",
                     partition=2, headers=[("trace-id", b"t-0018")])
    assert producer.flush(30) == 0
    txn = Producer({"bootstrap.servers": broker.bootstrap_servers, "transactional.id": "invoice-writer"})
    txn.init_transactions(30)
    txn.begin_transaction()
    txn.produce("orders", key=b"invoice-1", value=b'{"invoice": 1}', partition=1)
    assert txn.flush(30) == 0
    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "billing",
                         "client.id": "billing-1", "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe(["orders"])
    got, deadline = 0, time.monotonic() + 60
    while got < 15 and time.monotonic() < deadline:
        msg = consumer.poll(1.0)
        got += msg is not None and msg.error() is None
    consumer.commit(asynchronous=False)
    return consumer


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", default="docs")
    out = Path(ap.parse_args().out)
    out.mkdir(exist_ok=True)
    from playwright.sync_api import sync_playwright

    with MockBroker(port=0).run_in_thread() as broker:
        assert broker._loop is not None
        control = asyncio.run_coroutine_threadsafe(ControlServer(broker).start("127.0.0.1", 0), broker._loop).result(30)
        consumer = feed(broker)
        url = f"http://127.0.0.1:{control.port}/"
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, timeout=WAIT_MS)
            for shot in SHOTS:
                context, page, errors = open_page(browser, shot.width, 800, shot.scheme)
                page.goto(url + shot.route)
                page.wait_for_selector("main h1")
                page.wait_for_selector("main table tbody tr:visible, main form:visible")
                if shot.click:
                    page.get_by_role("button", name=shot.click).first.click()
                page.wait_for_selector(shot.shows)
                page.wait_for_timeout(500)  # let the live redraw settle before the picture
                page.screenshot(path=str(out / f"console-{shot.name}.png"))
                print(out / f"console-{shot.name}.png")
                context.close()
                assert errors == [], errors
            browser.close()
        consumer.close()
        asyncio.run_coroutine_threadsafe(control.stop(), broker._loop).result(30)


if __name__ == "__main__":
    main()
