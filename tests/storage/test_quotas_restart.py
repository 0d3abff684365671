"""Client quotas survive a restart on the same data dir (storage/cluster_settings.py): written to
mockbroker-metadata.json on each change, as Kafka's ClientQuotaRecords, and loaded before the broker
serves; a stored entry Kafka would refuse is skipped with a warning. Brokers without sockets."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from mockbroker.storage.metadata import FILE_NAME
from tests.storage.helpers import open_broker


def test_client_quotas_survive_a_restart_and_removals_too(tmp_path: Path) -> None:
    b = open_broker(tmp_path)
    b.set_quota(user="alice", client_id="<default>", producer_byte_rate=1024)
    b.set_quota(ip="10.0.0.1", connection_creation_rate=5)
    b.set_quota(client_id="gone", consumer_byte_rate=7)
    b.set_quota(client_id="gone", consumer_byte_rate=None)
    stored = json.loads((tmp_path / FILE_NAME).read_text())["client_quotas"]
    assert {"entity": {"client-id": None, "user": "alice"}, "values": {"producer_byte_rate": 1024.0}} in stored
    assert b.storage is not None
    b.storage.close()
    again = open_broker(tmp_path)
    assert sorted(again.quotas(), key=str) == sorted([
        {"entity": {"client-id": "<default>", "user": "alice"}, "values": {"producer_byte_rate": 1024.0}},
        {"entity": {"ip": "10.0.0.1"}, "values": {"connection_creation_rate": 5.0}}], key=str)
    applied = again.cluster.quotas.applied("producer_byte_rate", "alice", "any-client")
    assert applied is not None and applied.value == 1024.0


def test_a_stored_quota_kafka_refuses_is_skipped_with_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    b = open_broker(tmp_path)
    b.set_quota(user="bob", request_percentage=50)
    assert b.storage is not None
    b.storage.close()
    doc = json.loads((tmp_path / FILE_NAME).read_text())
    doc["client_quotas"].append({"entity": {"ip": "10.0.0.1"}, "values": {"producer_byte_rate": 1.0}})
    doc["client_quotas"].append({"entity": "not a mapping"})
    (tmp_path / FILE_NAME).write_text(json.dumps(doc))
    with caplog.at_level(logging.WARNING):
        again = open_broker(tmp_path)
    assert again.quotas() == [{"entity": {"user": "bob"}, "values": {"request_percentage": 50.0}}]
    assert "Invalid configuration key producer_byte_rate" in caplog.text
