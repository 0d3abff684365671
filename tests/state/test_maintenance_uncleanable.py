"""A log the cleaner cannot read is marked uncleanable once (Kafka's LogCleanerManager
.markPartitionUncleanable): the failure is logged once, and later passes leave the partition alone."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from mockbroker import maintenance
from mockbroker.protocol.errors import DecodeError
from mockbroker.server import MockBroker


def test_a_cleaning_failure_marks_the_partition_uncleanable_and_is_logged_once(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    broker = MockBroker(port=0)
    broker.create_topic("garbled", config={"cleanup.policy": "compact"})
    broker.create_topic("fine", config={"cleanup.policy": "compact"})
    calls: list[str] = []

    class Dirty:
        def __init__(self, log: Any, config: Any) -> None:
            self.log, self.config = log, config
            self.should_clean, self.cleanable_ratio = True, 1.0
            self.first_dirty_offset, self.first_uncleanable_offset = 0, 0

    def clean(log: Any, *_args: Any) -> Any:
        calls.append(log.topic)
        if log.topic == "garbled":
            raise DecodeError("batch declares 1 records but holds 2")
        return object()  # the stats of a pass (unused here)

    monkeypatch.setattr(maintenance, "log_to_clean", lambda log, config, now: Dirty(log, config))
    monkeypatch.setattr(maintenance, "clean", clean)
    monkeypatch.setattr(maintenance.LogMaintenance, "_prune_aborted_index", lambda self, log, stats: None)
    with caplog.at_level(logging.ERROR, logger="mockbroker"):
        broker.log_maintenance.clean_filthiest()
        broker.log_maintenance.clean_filthiest()

    assert sorted(calls) == ["fine", "fine", "garbled"]  # the uncleanable log is not tried again
    failures = [r for r in caplog.records if "cleaning garbled-0 failed" in r.getMessage()]
    assert len(failures) == 1 and "marked uncleanable" in failures[0].getMessage()
