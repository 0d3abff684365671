"""After a crash: recovery keeps the whole batches, truncates a torn or corrupt tail, finishes or undoes an
interrupted cleaning; a disk that fails gives KAFKA_STORAGE_ERROR for its partition only."""

from __future__ import annotations

import errno
import logging
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockbroker.clock import Clock
from mockbroker.errors import ErrorCode, KafkaError
from mockbroker.storage import segment_files
from mockbroker.storage.broker_storage import DataDirError
from tests.storage.helpers import T0, crash, open_broker, part, produce, values


def _filled(data_dir: Path, batches: int = 12, **config: str) -> list[int]:
    """A crashed broker's data dir with one topic "t" of `batches` batches of 1-3 records; the size of
    each batch, in order."""
    broker = open_broker(data_dir)
    broker.create_topic("t", config=config or None)
    for i in range(batches):
        produce(broker, "t", *[b"v%d-%d" % (i, j) for j in range(1 + i % 3)], pid=1000, epoch=0,
                seq=sum(1 + k % 3 for k in range(i)))
    sizes = [b.size for b in part(broker, "t").log.batches]
    crash(broker)
    return sizes


def test_a_crash_loses_nothing_that_was_written(tmp_path: Path) -> None:
    _filled(tmp_path)
    assert not (tmp_path / ".kafka_cleanshutdown").exists()
    broker = open_broker(tmp_path)
    assert broker.offsets("t")["high_watermark"] == sum(1 + i % 3 for i in range(12))
    assert values(broker, "t")[:2] == [b"v0-0", b"v1-0"]
    # the producer state was rebuilt from the log (no snapshot at the end): the last batch is a duplicate
    last = part(broker, "t").log.batches[-1]
    assert produce(broker, "t", b"v11-0", b"v11-1", b"v11-2", pid=1000, epoch=0,
                   seq=last.base_sequence).base_offset == last.base_offset


_TEMPLATE: dict[str, Any] = {}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(min_value=0, max_value=10_000))
def test_a_segment_cut_anywhere_keeps_exactly_the_whole_batches_before_the_cut(tmp_path_factory: pytest.TempPathFactory,
                                                                               cut: int) -> None:
    template = _TEMPLATE.get("dir")
    if template is None:  # one crashed data dir, copied for each example
        template = _TEMPLATE["dir"] = tmp_path_factory.mktemp("template")
        _TEMPLATE["sizes"] = _filled(template)
    sizes = _TEMPLATE["sizes"]
    data_dir = tmp_path_factory.mktemp("cut")
    shutil.copytree(template, data_dir, dirs_exist_ok=True)
    log_file = data_dir / "t-0" / "00000000000000000000.log"
    total = log_file.stat().st_size
    cut %= total + 1
    with open(log_file, "r+b") as f:
        f.truncate(cut)
    whole = 0
    kept = 0
    for size in sizes:
        if kept + size > cut:
            break
        kept += size
        whole += 1
    broker = open_broker(data_dir)
    log = part(broker, "t").log
    assert len(log.batches) == whole
    assert log_file.stat().st_size == kept  # the torn tail is gone from the file too
    assert log.log_end_offset == sum(1 + i % 3 for i in range(whole))
    # and the log takes appends again at its end
    produce(broker, "t", b"after", pid=1000, epoch=0, seq=log.log_end_offset)
    assert values(broker, "t")[-1] == b"after"
    broker.storage.close()  # type: ignore[union-attr]
    shutil.rmtree(data_dir)


def test_a_corrupt_batch_ends_the_log_there_and_later_segments_go(tmp_path: Path) -> None:
    broker = open_broker(tmp_path)
    broker.create_topic("s", config={"segment.bytes": "300"})
    for i in range(12):
        produce(broker, "s", b"x" * 30 + b"%d" % i)
    segs = broker.segments("s")
    assert len(segs) >= 3
    crash(broker)
    second = tmp_path / "s-0" / f"{segs[1]['base_offset']:020d}.log"
    data = bytearray(second.read_bytes())
    first_size = int.from_bytes(data[8:12], "big") + 12
    data[first_size + 70] ^= 0xFF  # a byte of the second batch's records: its CRC no longer matches
    second.write_bytes(bytes(data))
    # segments below the recovery point are trusted (flushed, as Kafka trusts them); with no recovery point
    # (a broker killed before its first checkpoint) every segment is checked
    (tmp_path / "recovery-point-offset-checkpoint").unlink()
    recovered = open_broker(tmp_path)
    assert recovered.offsets("s")["high_watermark"] == segs[1]["base_offset"] + 1
    assert second.stat().st_size == first_size
    assert [s["base_offset"] for s in recovered.segments("s")] == [segs[0]["base_offset"], segs[1]["base_offset"]]
    assert not (tmp_path / "s-0" / f"{segs[2]['base_offset']:020d}.log").exists()


def test_an_interrupted_cleaning_is_undone_or_finished(tmp_path: Path) -> None:
    broker = open_broker(tmp_path)
    broker.create_topic("c", config={"cleanup.policy": "compact", "segment.bytes": "250"})
    for i in range(9):
        produce(broker, "c", b"v%d" % i, key=b"k%d" % (i % 2))
    crash(broker)
    d = tmp_path / "c-0"
    # a pass that died writing: its .cleaned files are dropped, the originals stay
    (d / "00000000000000000000.log.cleaned").write_bytes(b"partial")
    (d / "00000000000000000000.index.cleaned").write_bytes(b"")
    b2 = open_broker(tmp_path)
    assert len(values(b2, "c")) == 9 and not list(d.glob("*.cleaned"))
    b2.compact("c")
    kept = values(b2, "c")
    crash(b2)
    # a pass that died after its output was complete (.swap) but before the originals went: finished
    swap_src = sorted(d.glob("*.log"))[0]
    cleaned = swap_src.read_bytes()
    os.replace(swap_src, d / (swap_src.name + ".swap"))
    b3 = open_broker(tmp_path)
    assert values(b3, "c") == kept and not list(d.glob("*.swap"))
    assert (d / swap_src.name).read_bytes() == cleaned


def test_a_partition_whose_directory_cannot_be_made_answers_storage_error(tmp_path: Path,
                                                                        caplog: pytest.LogCaptureFixture) -> None:
    broker = open_broker(tmp_path)
    (tmp_path / "blocked-0").write_bytes(b"a file where the partition directory should be")
    with caplog.at_level(logging.ERROR, "mockbroker.storage"):
        broker.create_topic("blocked")
        broker.create_topic("fine")
        for _ in range(3):
            with pytest.raises(KafkaError) as err:
                produce(broker, "blocked", b"x")
            assert err.value.code == ErrorCode.KAFKA_STORAGE_ERROR
    assert produce(broker, "fine", b"ok").base_offset == 0
    assert values(broker, "blocked") == []
    lines = [r for r in caplog.records if "blocked-0" in r.getMessage()]
    assert len(lines) == 1 and "KAFKA_STORAGE_ERROR" in lines[0].getMessage()


def test_a_full_disk_cuts_the_torn_write_and_answers_storage_error(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    broker = open_broker(tmp_path)
    broker.create_topic("t")
    broker.create_topic("u")
    produce(broker, "t", b"before")
    produce(broker, "u", b"before")
    size = (tmp_path / "t-0" / "00000000000000000000.log").stat().st_size
    real_write = os.write
    target = part(broker, "t").log.sink.active.log_fd  # type: ignore[union-attr]

    def full(fd: int, data: bytes) -> int:
        if fd == target:
            real_write(fd, bytes(data)[:10])  # part of it lands, then the disk is full
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(segment_files.os, "write", full)
    with pytest.raises(KafkaError) as err:
        produce(broker, "t", b"lost")
    assert err.value.code == ErrorCode.KAFKA_STORAGE_ERROR
    monkeypatch.setattr(segment_files.os, "write", real_write)
    assert produce(broker, "u", b"after").base_offset == 1  # the other partition keeps serving
    assert values(broker, "t") == [b"before"]
    assert (tmp_path / "t-0" / "00000000000000000000.log").stat().st_size == size
    crash(broker)
    assert values(open_broker(tmp_path), "t") == [b"before"]


def _count_flushes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The partition directory of every fsync of an active segment's .log for flush.messages / flush.ms."""
    flushed: list[str] = []
    real = segment_files.ActiveSegment.flush

    def flush(self: segment_files.ActiveSegment) -> None:
        flushed.append(self.directory.name)
        real(self)

    monkeypatch.setattr(segment_files.ActiveSegment, "flush", flush)
    return flushed


def test_flush_messages_1_fsyncs_every_append_and_the_default_none(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    synced = _count_flushes(monkeypatch)
    broker = open_broker(tmp_path)
    broker.create_topic("safe", config={"flush.messages": "1"})
    broker.create_topic("fast")
    synced.clear()
    for i in range(3):
        produce(broker, "fast", b"%d" % i)
    assert synced == []
    for i in range(3):
        produce(broker, "safe", b"%d" % i)
    assert synced == ["safe-0"] * 3


def test_the_broker_setting_log_flush_interval_messages_applies_to_every_topic(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    synced = _count_flushes(monkeypatch)
    broker = open_broker(tmp_path, config={"log.flush.interval.messages": "2"})
    broker.create_topic("t")
    for i in range(4):
        produce(broker, "t", b"%d" % i)
    assert synced == ["t-0"] * 2


def test_flush_ms_fsyncs_when_that_long_passed_since_the_last_flush(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    synced = _count_flushes(monkeypatch)
    clock = Clock(start_ms=T0, frozen=True)
    broker = open_broker(tmp_path, clock=clock)
    broker.create_topic("t", config={"flush.ms": "1000"})
    produce(broker, "t", b"a")
    produce(broker, "t", b"b")
    assert synced == []
    clock.advance(1.0)
    produce(broker, "t", b"c")
    assert synced == ["t-0"]


def test_a_partition_that_cannot_be_read_starts_offline_and_the_others_load(tmp_path: Path,
                                                                          caplog: pytest.LogCaptureFixture) -> None:
    broker = open_broker(tmp_path)
    broker.create_topic("bad")
    broker.create_topic("good")
    produce(broker, "bad", b"x")
    produce(broker, "good", b"y")
    broker.storage.close()  # type: ignore[union-attr]
    log_file = tmp_path / "bad-0" / "00000000000000000000.log"
    log_file.unlink()
    log_file.mkdir()  # reading it fails (IsADirectoryError)
    with caplog.at_level(logging.ERROR, "mockbroker.storage"):
        again = open_broker(tmp_path)
    assert values(again, "good") == [b"y"]
    with pytest.raises(KafkaError) as err:
        produce(again, "bad", b"z")
    assert err.value.code == ErrorCode.KAFKA_STORAGE_ERROR
    assert [r for r in caplog.records if "bad-0" in r.getMessage()]


def test_a_metadata_file_that_does_not_parse_is_refused_with_one_message(tmp_path: Path) -> None:
    open_broker(tmp_path).storage.close()  # type: ignore[union-attr]
    (tmp_path / "mockbroker-metadata.json").write_text("{not json")
    with pytest.raises(DataDirError, match="does not parse"):
        open_broker(tmp_path)


def test_a_segment_with_no_whole_batch_after_a_crash_goes_and_the_log_ends_before_it(tmp_path: Path) -> None:
    broker = open_broker(tmp_path)
    broker.create_topic("t", config={"segment.bytes": "300"})
    for i in range(6):
        produce(broker, "t", b"x" * 40 + b"%d" % i)
    segs = broker.segments("t")
    crash(broker)
    last = tmp_path / "t-0" / f"{segs[-1]['base_offset']:020d}.log"
    last.write_bytes(last.read_bytes()[:30])  # the crash tore the first batch of the newest segment
    again = open_broker(tmp_path)
    assert not last.exists()
    assert again.offsets("t")["high_watermark"] == segs[-1]["base_offset"]
    produce(again, "t", b"after")
    crash(again)
    third = open_broker(tmp_path)
    assert values(third, "t")[-1] == b"after"
    assert third.offsets("t")["high_watermark"] == segs[-1]["base_offset"] + 1
