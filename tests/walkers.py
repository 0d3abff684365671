"""Both record walkers of Produce's validation, for tests that run against each: the Python reference
(record.check_records_python) and the C accelerator (record.check_records_c, skipped where it was not
built; tests/protocol/test_records_walk_c.py fails where a compiler was there and it still is not)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mockbroker.protocol.records.record import RecordsChecked, check_records_c, check_records_python

Walker = Callable[..., RecordsChecked]

WALKERS: dict[str, Walker | None] = {"python": check_records_python, "c": check_records_c}

WALKER_PARAMS = [
    pytest.param(name, marks=pytest.mark.skipif(impl is None, reason="the C walker was not built (no compiler)"))
    for name, impl in WALKERS.items()
]


def walker(name: str) -> Walker:
    impl = WALKERS[name]
    assert impl is not None
    return impl
