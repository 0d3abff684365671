"""Nothing acknowledged is dropped without a word (issue 33, item 5): recovery warns for every truncation and
every missing file, naming the file and the offsets lost, and refuses a log missing a segment in the middle
unless mockbroker.recovery.allow.missing.segments=true."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from mockbroker.storage import DataDirError
from mockbroker.storage.recovery import MissingSegmentError
from tests.storage.helpers import crash, open_broker, produce, values

pytestmark = pytest.mark.adversarial

RECORDS = 200
PER_SEGMENT = 20  # with segment.bytes 2000 and these values


def _filled(data_dir: Path, *, clean: bool) -> list[Path]:
    """200 single-record batches in segments of 20, stopped cleanly or crashed; the segment files in order."""
    broker = open_broker(data_dir)
    broker.create_topic("t", config={"segment.bytes": "2000"})
    for i in range(RECORDS):
        produce(broker, "t", b"value-%03d" % i + b"x" * 20)
    assert broker.storage is not None
    if clean:
        broker.storage.close()
    else:
        crash(broker)
    logs = sorted((data_dir / "t-0").glob("*.log"))
    assert len(logs) == RECORDS // PER_SEGMENT
    return logs


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and r.name == "mockbroker.storage"]


def test_a_last_segment_cut_to_nothing_after_a_clean_stop_is_reported_with_the_offsets_lost(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    logs = _filled(tmp_path, clean=True)
    logs[-1].write_bytes(b"")
    with caplog.at_level(logging.WARNING, "mockbroker.storage"):
        again = open_broker(tmp_path)
    lost_from = RECORDS - PER_SEGMENT
    assert len(values(again, "t")) == lost_from
    [line] = [w for w in _warnings(caplog) if "are lost" in w]
    assert str(logs[-1]) in line and f"offsets {lost_from} to {RECORDS - 1} are lost" in line


@pytest.mark.parametrize("clean", [True, False], ids=["clean-stop", "crash"])
def test_a_missing_middle_segment_refuses_to_start_naming_the_file_and_the_setting(tmp_path: Path, clean: bool) -> None:
    logs = _filled(tmp_path, clean=clean)
    middle = logs[len(logs) // 2]
    middle.unlink()
    with pytest.raises(MissingSegmentError) as refused:
        open_broker(tmp_path)
    message = str(refused.value)
    assert isinstance(refused.value, DataDirError)
    assert middle.name in message and "mockbroker.recovery.allow.missing.segments=true" in message
    base = int(middle.stem)
    assert f"records {base} to {base + PER_SEGMENT - 1} are lost" in message
    assert sorted((tmp_path / "t-0").glob("*.log")) == [p for p in logs if p != middle]  # nothing deleted


def test_the_setting_starts_without_the_missing_segment_and_warns(tmp_path: Path,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    logs = _filled(tmp_path, clean=True)
    middle = logs[len(logs) // 2]
    middle.unlink()
    base = int(middle.stem)
    with caplog.at_level(logging.WARNING, "mockbroker.storage"):
        again = open_broker(tmp_path, config={"mockbroker.recovery.allow.missing.segments": "true"})
    got = values(again, "t")
    assert len(got) == RECORDS - PER_SEGMENT and b"value-%03d" % base + b"x" * 20 not in got
    [line] = [w for w in _warnings(caplog) if middle.name in w]
    assert f"offsets {base} to {base + PER_SEGMENT - 1} are lost" in line
    produce(again, "t", b"after")
    assert values(again, "t")[-1] == b"after"


def test_a_hole_with_no_file_left_behind_is_found_by_the_offsets(tmp_path: Path) -> None:
    logs = _filled(tmp_path, clean=False)
    middle = logs[3]
    for path in (tmp_path / "t-0").glob(middle.stem + ".*"):
        path.unlink()  # the .log, its indexes and its snapshot: only the offsets tell
    with pytest.raises(MissingSegmentError, match=f"no segment holds offsets {int(middle.stem)} to "
                                                  f"{int(middle.stem) + PER_SEGMENT - 1}"):
        open_broker(tmp_path)


def test_a_torn_segment_is_reported_with_its_file_and_each_later_segment_deleted(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    logs = _filled(tmp_path, clean=False)
    torn = logs[-3]
    torn.write_bytes(torn.read_bytes()[:100])  # the first batch whole, the second cut
    (tmp_path / "recovery-point-offset-checkpoint").unlink()  # every segment is checked
    with caplog.at_level(logging.WARNING, "mockbroker.storage"):
        again = open_broker(tmp_path)
    end = int(torn.stem) + 1
    assert again.offsets("t")["high_watermark"] == end
    warnings = _warnings(caplog)
    assert [w for w in warnings if str(torn) in w and f"truncated to offset {end}" in w
            and f"offsets from {end} on are lost" in w]
    for later in logs[-2:]:
        assert [w for w in warnings if str(later) in w and "deleted after the corruption" in w]


def test_a_missing_last_segment_is_a_lost_tail_warned_not_refused(tmp_path: Path,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    logs = _filled(tmp_path, clean=True)
    logs[-1].unlink()
    with caplog.at_level(logging.WARNING, "mockbroker.storage"):
        again = open_broker(tmp_path)
    assert len(values(again, "t")) == RECORDS - PER_SEGMENT
    assert [w for w in _warnings(caplog) if logs[-1].name in w and f"offsets from {int(logs[-1].stem)} on" in w]


def test_a_compacted_log_with_offset_holes_between_segments_loads_without_a_word(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    broker = open_broker(tmp_path)
    broker.create_topic("c", config={"cleanup.policy": "compact", "segment.bytes": "250"})
    for i in range(30):
        produce(broker, "c", b"x" * 30 + b"%d" % i, key=b"k%d" % (i % 3))
    broker.compact("c")
    assert broker.storage is not None
    broker.storage.close()
    with caplog.at_level(logging.WARNING, "mockbroker.storage"):
        again = open_broker(tmp_path)
    assert values(again, "c")[-3:] == [b"x" * 30 + b"%d" % i for i in (27, 28, 29)]
    assert _warnings(caplog) == []
