"""Sample message values built from the generated specs, independent of the codec's own compilation.

Two generators walk the same field tuples (name, type, versions, nullable_versions, tagged_versions,
tag, default, never_flexible, fields):

- `message_strategy(api_key, kind, version)`: a hypothesis strategy of dicts for the round-trip tests.
  Values have the right type and range; nullable fields are sometimes None; arrays are small; regular
  fields are sometimes left out (the encoder then writes their default); tagged fields are sometimes
  set to a non-default value; in flexible versions, unknown tagged fields are sometimes added under
  `_unknown_tags`; fields the version does not carry are sometimes set to junk (the encoder must
  ignore them).
- `random_message(api_key, kind, version, rng)`: the same kind of value from a seeded random.Random,
  for the fuzz tests, which need thousands of cheap valid encodings to mutate.

`normalise(api_key, kind, version, value)` is what decoding the encoding of `value` must give: every
field present, absent ones at their schema default, tagged fields at their default when left out.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator, Mapping
from typing import Any

from hypothesis import strategies as st

from mockbroker.protocol._generated.specs import MESSAGES
from mockbroker.protocol.messages import REQUEST, RESPONSE, Msg
from mockbroker.protocol.primitives import ZERO_UUID

KINDS = {"request": REQUEST, "response": RESPONSE}

INT_RANGES: dict[str, tuple[int, int]] = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
}

MAX_ARRAY = 2  # elements per array: nesting goes four levels deep in places (Fetch, DescribeQuorum)
MAX_TEXT = 8
UNKNOWN_TAG_VALUES = (0, 1, 2, 3, 7, 100, 127, 128, 16383, 16384, 2**31 - 1)

Fields = tuple[tuple[Any, ...], ...]


# --- the specs ----------------------------------------------------------------------------------


def in_range(rng: tuple[int, int] | None, version: int) -> bool:
    return rng is not None and rng[0] <= version <= rng[1]


def segment(api_key: int, kind: str, version: int) -> tuple[Fields, bool]:
    """(fields, flexible) of a request or response body at one version, straight from the specs."""
    for lo, hi, flex_from, fields in MESSAGES[api_key][KINDS[kind]]:
        if lo <= version <= hi:
            return fields, flex_from is not None and version >= flex_from
    raise KeyError((api_key, kind, version))


def versions(api_key: int, kind: str) -> Iterator[int]:
    for lo, hi, _flex, _fields in MESSAGES[api_key][KINDS[kind]]:
        yield from range(lo, hi + 1)


def all_combos() -> list[tuple[int, str, int]]:
    """Every (api_key, kind, version) the specs hold."""
    return [(key, kind, v) for key in sorted(MESSAGES) for kind in KINDS for v in versions(key, kind)]


def combo_id(combo: tuple[int, str, int]) -> str:
    key, kind, version = combo
    return f"{MESSAGES[key][0]}{kind.capitalize()}-v{version}"


def is_tagged(spec: tuple[Any, ...], version: int, flexible: bool) -> bool:
    return flexible and in_range(spec[4], version)


def known_tags(fields: Fields, version: int, flexible: bool) -> set[int]:
    return {spec[5] for spec in fields if in_range(spec[2], version) and is_tagged(spec, version, flexible)}


def default_of(spec: tuple[Any, ...]) -> Any:
    """The value a decoder gives a field that is not on the wire."""
    ftype, default = spec[1], spec[6]
    if isinstance(default, list):
        return []
    if ftype == "uuid" and default is None:
        return ZERO_UUID
    return default


def absent_value(spec: tuple[Any, ...], version: int, flexible: bool) -> Any:
    """What a field not on the wire decodes as: a non-nullable struct comes back with all defaults."""
    if spec[1] == "struct" and spec[6] is None and not in_range(spec[3], version):
        return normalise_struct(spec[8], version, flexible, {})
    return default_of(spec)


# --- normalisation: what decode(encode(value)) must return -----------------------------------


def normalise(api_key: int, kind: str, version: int, value: Mapping[str, Any]) -> Msg:
    fields, flexible = segment(api_key, kind, version)
    newest = MESSAGES[api_key][KINDS[kind]][-1][3]
    return normalise_struct(fields, version, flexible, value, newest if newest is not fields else None)


def normalise_struct(fields: Fields, version: int, flexible: bool, value: Mapping[str, Any],
                     newest: Fields | None = None) -> Msg:
    """newest: the struct in the newest segment; its fields missing from `fields` decode as defaults."""
    out = Msg()
    newest_by_name = {spec[0]: spec for spec in newest} if newest else {}
    present = {spec[0] for spec in fields}
    for name, spec in newest_by_name.items():
        if name not in present:
            out[name] = default_of(spec)
    for spec in fields:
        name, default = spec[0], spec[6]
        if not in_range(spec[2], version):
            out[name] = absent_value(spec, version, flexible)
            continue
        v = value.get(name, default)
        nullable = in_range(spec[3], version)
        if is_tagged(spec, version, flexible) and (v == default or (v is None and not nullable)):
            out[name] = absent_value(spec, version, flexible)
            continue
        twin = newest_by_name.get(name)
        out[name] = _normalise_value(spec, version, flexible, v, twin[8] if twin else None)
    unknown = value.get("_unknown_tags")
    if flexible and unknown:
        out["_unknown_tags"] = sorted((int(t), bytes(d)) for t, d in unknown)
    return out


def _normalise_value(spec: tuple[Any, ...], version: int, flexible: bool, v: Any,
                     newest_sub: Fields | None = None) -> Any:
    ftype, sub = spec[1], spec[8]
    nullable = in_range(spec[3], version)
    if ftype == "struct":
        if v is None:
            return None if nullable else normalise_struct(sub, version, flexible, {}, newest_sub)
        return normalise_struct(sub, version, flexible, v, newest_sub)
    if ftype == "[]struct":
        if v is None:
            return None if nullable else []
        return [normalise_struct(sub, version, flexible, e, newest_sub) for e in v]
    if ftype.startswith("[]"):
        if v is None:
            return None if nullable else []
        return list(v)
    if ftype == "uuid":
        return ZERO_UUID if v is None else v
    if ftype in ("bytes", "records"):
        return None if v is None else bytes(v)
    return v


# --- hypothesis strategies ---------------------------------------------------------------------

_JUNK: st.SearchStrategy[Any] = st.sampled_from(["junk", 12345, None, [], -1])
_STRATEGY_CACHE: dict[tuple[int, int, bool], st.SearchStrategy[dict[str, Any]]] = {}


def primitive_strategy(ftype: str) -> st.SearchStrategy[Any]:
    if ftype in INT_RANGES:
        lo, hi = INT_RANGES[ftype]
        return st.one_of(st.sampled_from([lo, hi, 0, -1 if lo < 0 else 1]), st.integers(lo, hi))
    if ftype == "bool":
        return st.booleans()
    if ftype == "float64":
        return st.floats(allow_nan=False)
    if ftype == "string":
        return st.text(max_size=MAX_TEXT)
    if ftype in ("bytes", "records"):
        return st.binary(max_size=MAX_TEXT)
    if ftype == "uuid":
        return st.one_of(st.just(ZERO_UUID), st.uuids())
    raise AssertionError(f"unknown primitive {ftype}")


def field_strategy(spec: tuple[Any, ...], version: int, flexible: bool) -> st.SearchStrategy[Any]:
    ftype, sub = spec[1], spec[8]
    base: st.SearchStrategy[Any]
    if ftype == "struct":
        base = struct_strategy(sub, version, flexible)
    elif ftype == "[]struct":
        base = st.lists(struct_strategy(sub, version, flexible), max_size=MAX_ARRAY)
    elif ftype.startswith("[]"):
        base = st.lists(primitive_strategy(ftype[2:]), max_size=MAX_ARRAY + 1)
    else:
        base = primitive_strategy(ftype)
    if in_range(spec[3], version):
        return st.one_of(st.none(), base)
    return base


def unknown_tags_strategy(known: set[int]) -> st.SearchStrategy[list[tuple[int, bytes]]]:
    tags = st.one_of(st.sampled_from(UNKNOWN_TAG_VALUES), st.integers(0, 2**31 - 1)).filter(
        lambda t: t not in known
    )
    return st.lists(st.tuples(tags, st.binary(max_size=4)), max_size=2, unique_by=lambda p: p[0]).map(
        lambda items: sorted(items)
    )


def struct_strategy(fields: Fields, version: int, flexible: bool) -> st.SearchStrategy[dict[str, Any]]:
    key = (id(fields), version, flexible)
    cached = _STRATEGY_CACHE.get(key)
    if cached is not None:
        return cached
    required: dict[str, st.SearchStrategy[Any]] = {}
    optional: dict[str, st.SearchStrategy[Any]] = {}
    for spec in fields:
        name = spec[0]
        if not in_range(spec[2], version):
            optional[name] = _JUNK
        elif is_tagged(spec, version, flexible):
            optional[name] = field_strategy(spec, version, flexible)
        else:
            # mostly present; left out now and then, so the encoder's defaults are exercised
            optional[name] = field_strategy(spec, version, flexible)
            required[name] = field_strategy(spec, version, flexible)
    if flexible:
        optional["_unknown_tags"] = unknown_tags_strategy(known_tags(fields, version, flexible))
    everything = st.fixed_dictionaries({}, optional=optional)
    full = st.fixed_dictionaries(required, optional={k: v for k, v in optional.items() if k not in required})
    strategy = st.one_of(full, everything) if required else everything
    _STRATEGY_CACHE[key] = strategy
    return strategy


def message_strategy(api_key: int, kind: str, version: int) -> st.SearchStrategy[dict[str, Any]]:
    fields, flexible = segment(api_key, kind, version)
    return struct_strategy(fields, version, flexible)


# --- seeded plain-random values, for the fuzz tests ------------------------------------------


def random_primitive(ftype: str, rng: random.Random) -> Any:
    if ftype in INT_RANGES:
        lo, hi = INT_RANGES[ftype]
        return rng.choice([lo, hi, 0, rng.randint(lo, hi)])
    if ftype == "bool":
        return rng.random() < 0.5
    if ftype == "float64":
        return rng.uniform(-1e9, 1e9)
    if ftype == "string":
        return "".join(rng.choice("ab\u00e9\u4e2d\U0001f600") for _ in range(rng.randint(0, 4)))
    if ftype in ("bytes", "records"):
        return rng.randbytes(rng.randint(0, 6))
    if ftype == "uuid":
        return uuid.UUID(int=rng.getrandbits(128))
    raise AssertionError(f"unknown primitive {ftype}")


def random_struct(fields: Fields, version: int, flexible: bool, rng: random.Random) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for spec in fields:
        name, ftype, sub = spec[0], spec[1], spec[8]
        if not in_range(spec[2], version):
            continue
        if in_range(spec[3], version) and rng.random() < 0.2:
            out[name] = None
        elif ftype == "struct":
            out[name] = random_struct(sub, version, flexible, rng)
        elif ftype == "[]struct":
            out[name] = [random_struct(sub, version, flexible, rng) for _ in range(rng.randint(0, MAX_ARRAY))]
        elif ftype.startswith("[]"):
            out[name] = [random_primitive(ftype[2:], rng) for _ in range(rng.randint(0, MAX_ARRAY + 1))]
        else:
            out[name] = random_primitive(ftype, rng)
    if flexible and rng.random() < 0.3:
        known = known_tags(fields, version, flexible)
        tag = rng.choice([t for t in UNKNOWN_TAG_VALUES if t not in known])
        out["_unknown_tags"] = [(tag, rng.randbytes(rng.randint(0, 3)))]
    return out


def random_message(api_key: int, kind: str, version: int, rng: random.Random) -> dict[str, Any]:
    fields, flexible = segment(api_key, kind, version)
    return random_struct(fields, version, flexible, rng)
