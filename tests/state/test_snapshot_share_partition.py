"""A share partition's copy for snapshots (SharePartition.__deepcopy__, mockbroker/state/share/partition.py): the
same fields as copy.deepcopy's, nothing shared that changes, so the copy and the original live apart."""

from __future__ import annotations

import copy
import dataclasses

from mockbroker.state.copying import copy_value
from mockbroker.state.share.partition import RecordState, SharePartition


def _fields(sp: SharePartition) -> dict[str, object]:
    out = {k: v for k, v in vars(sp).items() if k != "records"}
    out["records"] = {o: dataclasses.asdict(r) for o, r in sp.records.items()}
    return out


def _partition() -> SharePartition:
    sp = SharePartition(5, lock_duration_ms=1000, delivery_limit=3, max_in_flight=50)
    sp.acquire("a", 20, 6, now_ms=100)  # 5-10 acquired by a
    sp.acknowledge("a", 5, 6, [1], now_ms=200)  # 5-6 acknowledged: the start moves to 7
    sp.acknowledge("a", 7, 7, [2], now_ms=200)  # 7 released (available, delivered once)
    sp.acquire("b", 20, 2, now_ms=300)  # 7 and 11 acquired by b
    return sp


def test_the_copy_has_the_fields_of_deepcopy_and_shares_no_record() -> None:
    sp = _partition()
    for copied in (copy.deepcopy(sp), copy_value(sp, {})):
        assert type(copied) is SharePartition
        assert _fields(copied) == _fields(sp)
        assert not any(copied.records[o] is sp.records[o] for o in sp.records)


def test_the_copy_and_the_original_change_apart() -> None:
    sp = _partition()
    before = _fields(sp)
    copied = copy_value(sp, {})
    copied.acknowledge("b", 7, 7, [1], now_ms=400)
    copied.expire(now_ms=10_000)
    assert _fields(sp) == before
    assert sp.records[8].state == RecordState.ACQUIRED and sp.start_offset == 7
    assert copied.records[8].state == RecordState.AVAILABLE and copied.start_offset == 8  # 7 acknowledged
