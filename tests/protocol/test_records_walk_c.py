"""The C walker (mockbroker/protocol/records/_walk.c) against the Python one it follows (record.check_records_python):
the same findings, or the same InvalidRecordError with the same message, on every input.

Differential, with hypothesis: valid sections (Kafka's encoding, then records built field by field with
over-long, non-canonical, out-of-range varints and wrong lengths), mutations and cuts of them, random bytes,
counts around and far from the real one, every buffer type, both per-record rules. Every malformation of
tests/protocol/test_records_walk.py is among them (that file runs each of its cases against both walkers).
MOCKBROKER_WALK_EXAMPLES sets the number of examples (default 300; run once with 20000 after changing
_walk.c). Also: the C walker is built where a compiler is, and MOCKBROKER_PURE_PYTHON=1 picks the Python one.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import random
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockbroker.protocol.primitives import encode_varint
from mockbroker.protocol.records import record
from mockbroker.protocol.records.builder import encode_record
from mockbroker.protocol.records.record import InvalidRecordError, check_records_c, check_records_python

EXAMPLES = int(os.environ.get("MOCKBROKER_WALK_EXAMPLES", "300"))
REPO = Path(__file__).resolve().parent.parent.parent

needs_c = pytest.mark.skipif(check_records_c is None, reason="the C walker was not built (no compiler)")
walk_settings = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))


def outcome(walk: Any, data: Any, count: int, **options: Any) -> tuple[Any, ...]:
    """What a walker made of the input: its findings, or its error's type and message."""
    try:
        errors, max_delta = walk(data, count, **options)
    except InvalidRecordError as exc:
        return ("invalid", str(exc))
    except Exception as exc:  # noqa: BLE001 - any other exception is a difference too
        return ("raised", type(exc).__name__, str(exc))
    return ("ok", list(errors), max_delta)


def guarded(data: bytes) -> memoryview:
    """data at the very end of readable memory: the page after it is PROT_NONE, so a read past its end
    kills the process (SIGSEGV) instead of reading a neighbour's bytes (bytes objects end in a NUL)."""
    page = mmap.PAGESIZE
    size = (len(data) // page + 1) * page
    region = mmap.mmap(-1, size + page)
    address = ctypes.addressof(ctypes.c_char.from_buffer(region))
    if LIBC.mprotect(ctypes.c_void_p(address + size), ctypes.c_size_t(page), PROT_NONE) != 0:
        raise OSError(ctypes.get_errno(), "mprotect")
    region[size - len(data) : size] = data
    return memoryview(region)[size - len(data) : size]


LIBC = ctypes.CDLL(None, use_errno=True)
PROT_NONE = 0


def same(data: bytes, count: int, **options: Any) -> tuple[Any, ...]:
    """Both walkers agree on data (as bytes, bytearray, memoryview, and right before a guard page); the
    outcome."""
    assert check_records_c is not None
    expected = outcome(check_records_python, data, count, **options)
    for buffer in (data, bytearray(data), memoryview(data), guarded(data)):
        assert outcome(check_records_c, buffer, count, **options) == expected, (data.hex(), count, options)
    return expected


def raw_varint(raw: int, pad: int = 0) -> bytes:
    """raw (not zigzag-encoded) as a varint of 7-bit groups, with `pad` redundant zero groups after them."""
    groups = []
    while True:
        groups.append(raw & 0x7F)
        raw >>= 7
        if not raw:
            break
    groups += [0] * pad
    return bytes([g | 0x80 for g in groups[:-1]] + [groups[-1]])


def zigzag(value: int) -> int:
    return (value << 1) ^ (value >> 127) if value >= 0 else ((-value) << 1) - 1


# -- strategies ---------------------------------------------------------------------------------------------

options_strategy = st.fixed_dictionaries({
    "keys_required": st.booleans(),
    "timestamp_deltas": st.one_of(
        st.none(),
        st.tuples(st.integers(-(2**70), 2**70), st.integers(-(2**70), 2**70)),
        st.tuples(st.integers(-20, 20), st.integers(-20, 20)),
    ),
})

valid_records = st.lists(
    st.tuples(
        st.one_of(st.none(), st.binary(max_size=20)),
        st.one_of(st.none(), st.binary(max_size=200)),
        st.lists(st.tuples(st.text(max_size=5), st.one_of(st.none(), st.binary(max_size=10))), max_size=3),
        st.one_of(st.integers(-(2**63), 2**63 - 1), st.integers(-30, 30)),
    ),
    min_size=0,
    max_size=20,
)


@st.composite
def varint_field(draw: Any, value: int, bits: int) -> bytes:
    """A varint for `value`, usually as Kafka writes it, sometimes padded, over-long or out of range."""
    kind = draw(st.integers(0, 9))
    if kind <= 5:
        return encode_varint(value)
    if kind == 6:
        return raw_varint(zigzag(value) & (2**64 - 1), draw(st.integers(1, 6)))  # non-canonical, maybe too long
    if kind == 7:
        return raw_varint(draw(st.integers(2**bits - 4, 2**bits + 64)))  # at and past the edge of the range
    if kind == 8:
        return b"\x80" * draw(st.integers(1, 12)) + draw(st.sampled_from([b"\x00", b"\x01", b"\x7f", b""]))
    return raw_varint(draw(st.integers(0, 2**(bits + 8))))


@st.composite
def length_and_bytes(draw: Any, max_size: int) -> bytes:
    """A key, value or header key: a null (any negative length), or a length and bytes, the two agreeing
    or not."""
    if draw(st.integers(0, 4)) == 0:
        return draw(varint_field(draw(st.integers(-(2**31), -1)), 32))
    content = draw(st.binary(max_size=max_size))
    length = len(content) + draw(st.sampled_from([0, 0, 0, 0, 1, -1, 2, 2**20, 2**31 - 1]))
    return draw(varint_field(length, 32)) + content


@st.composite
def crafted_record(draw: Any, index: int) -> bytes:
    """One record built field by field, each field usually right and sometimes wrong."""
    body = bytes([draw(st.integers(0, 255))])
    body += draw(varint_field(draw(st.integers(-(2**63), 2**63 - 1)), 64))
    body += draw(varint_field(index if draw(st.integers(0, 7)) else draw(st.integers(-3, 40)), 32))
    body += draw(length_and_bytes(30)) + draw(length_and_bytes(60))
    headers = draw(st.lists(st.tuples(length_and_bytes(8), length_and_bytes(8)), max_size=3))
    count = len(headers) + draw(st.sampled_from([0, 0, 0, 0, 1, -1, -len(headers) - 1, 2**20]))
    body += draw(varint_field(count, 32)) + b"".join(k + v for k, v in headers)
    declared = len(body) + draw(st.sampled_from([0, 0, 0, 0, 0, 1, -1, -len(body) - 1, 2**31 - 1, -(2**31)]))
    return draw(varint_field(declared, 32)) + body


@st.composite
def crafted_section(draw: Any) -> tuple[bytes, int]:
    size = draw(st.integers(0, 8))
    data = b"".join(draw(crafted_record(i)) for i in range(size))
    return data, size


def mutate(data: bytes, rnd: random.Random) -> bytes:
    """A byte changed, bytes cut, a varint or a run of 0x80/0xFF put in, the tail cut off."""
    out = bytearray(data)
    if not out:
        return bytes(rnd.randrange(256) for _ in range(rnd.randrange(4)))
    pos = rnd.randrange(len(out))
    choice = rnd.randrange(6)
    if choice == 0:
        out[pos] = rnd.randrange(256)
    elif choice == 1:
        out[pos] ^= 1 << rnd.randrange(8)
    elif choice == 2:
        del out[pos:pos + rnd.randrange(1, 4)]
    elif choice == 3:
        out[pos:pos] = raw_varint(rnd.choice([0x7F, 0x80, 2**31, 2**32 - 1, 2**32, 2**35, 2**63, 2**64]))
    elif choice == 4:
        out[pos:pos + rnd.randrange(1, 12)] = rnd.choice([b"\x80", b"\xff"]) * rnd.randrange(1, 12)
    else:
        del out[pos:]
    return bytes(out)


def counts(real: int, rnd: random.Random) -> list[int]:
    return [real, real + 1, real - 1, 0, -1, rnd.randrange(-5, 50), 2**31 - 1, -(2**31), 2**63, 2**70, -(2**70)]


# -- the differential tests ---------------------------------------------------------------------------------


@needs_c
@walk_settings
@given(valid_records, options_strategy, st.randoms(use_true_random=False))
def test_both_walkers_agree_on_valid_sections_and_their_mutations(records: list[Any], options: dict[str, Any],
                                                                   rnd: random.Random) -> None:
    data = b"".join(encode_record(i, ts, k, v, h) for i, (k, v, h, ts) in enumerate(records))
    assert same(data, len(records), **options)[0] == "ok"
    for count in counts(len(records), rnd):
        same(data, count, **options)
    for _ in range(10):
        mutated = mutate(data, rnd)
        same(mutated, len(records), **options)
        same(mutated, rnd.choice(counts(len(records), rnd)), **options)


@needs_c
@walk_settings
@given(crafted_section(), options_strategy, st.randoms(use_true_random=False))
def test_both_walkers_agree_on_records_built_field_by_field(section: tuple[bytes, int], options: dict[str, Any],
                                                            rnd: random.Random) -> None:
    data, size = section
    same(data, size, **options)
    same(data, size + rnd.choice([-1, 1]), **options)
    for _ in range(4):
        same(mutate(data, rnd), size, **options)


@needs_c
@walk_settings
@given(st.binary(max_size=64), st.integers(-3, 10), options_strategy)
def test_both_walkers_agree_on_random_bytes(data: bytes, count: int, options: dict[str, Any]) -> None:
    same(data, count, **options)


@needs_c
def test_both_walkers_agree_on_the_edges() -> None:
    # Varints at every length and at the edges of their range, in each field; huge and negative counts.
    one = encode_record(0, 0, b"k", b"v", [("h", b"x")])
    cases: list[tuple[bytes, int]] = [(b"", 0), (b"", 1), (b"", 2**70), (one, 1), (one, 2**63), (one, -(2**63) - 1)]
    for raw in [0, 1, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**35 - 1, 2**63, 2**64 - 1, 2**64, 2**70]:
        for pad in range(0, 11):
            varint = raw_varint(raw, pad)
            for field in range(6):
                fields = [b"\x00", b"\x00", b"\x00", b"\x02k", b"\x02v", b"\x00"]
                fields[field] = varint
                body = b"".join(fields)
                cases += [(encode_varint(len(body)) + body, 1), (varint + body, 1), (varint, 1)]
    for data, count in cases:
        same(data, count)
        same(data, count, keys_required=True, timestamp_deltas=(-(2**80), 2**80))
        same(data, count, timestamp_deltas=(2**63, 2**64))
        same(data, count, timestamp_deltas=(-(2**64), -(2**63) - 1))


@needs_c
def test_both_walkers_report_findings_alike() -> None:
    data = b"".join(encode_record(i, d, None if i % 3 else b"k", b"v", []) for i, d in enumerate([0, -10, 5, 11]))
    for options in [{}, {"keys_required": True}, {"timestamp_deltas": (-5, 10)},
                    {"keys_required": True, "timestamp_deltas": (-5, 10)}, {"timestamp_deltas": (2**64, -(2**64))}]:
        assert same(data, 4, **options)[0] == "ok"
    assert check_records_c is not None
    # keyless: records 1 and 2 (the key is reported first); delta 11 of record 3 past the bound
    assert check_records_c(data, 4, keys_required=True, timestamp_deltas=(-5, 10)) == ([(1, None), (2, None),
                                                                                         (3, 11)], 11)


# -- how the C walker is chosen -----------------------------------------------------------------------------


def test_the_c_walker_is_built_where_a_compiler_is() -> None:
    # pip install -e . (scripts/install-test-deps) builds it in place; optional, so a failed build only warns.
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    headers = Path(sysconfig.get_paths()["include"], "Python.h")
    if shutil.which(compiler) is None or not headers.exists():
        pytest.skip("no C compiler or no Python headers here: the Python walker is the one")
    assert check_records_c is not None, "the C walker did not build: run scripts/install-test-deps (pip install -e .)"


@pytest.mark.parametrize("setting, expected", [("1", "python"), ("0", "c"), ("", "c")])
def test_mockbroker_pure_python_picks_the_python_walker(setting: str, expected: str) -> None:
    if check_records_c is None:
        expected = "python"
    env = {**os.environ, record.PURE_PYTHON_ENV: setting}
    code = "from mockbroker.protocol.records import record; print(record.WALKER)"
    proc = subprocess.run([sys.executable, "-c", code], env=env, cwd=REPO, capture_output=True, text=True,
                          timeout=60, check=True)
    assert proc.stdout.strip() == expected
