# The C walker (_walk.c); record.py wraps it as check_records_c.
from typing_extensions import Buffer

def check_records(
    data: Buffer, count: int, keys_required: bool, timestamp_deltas: tuple[int, int] | None, /
) -> tuple[list[tuple[int, int | None]], int | None] | str: ...
