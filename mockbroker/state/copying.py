"""Fast copies of the model's objects for snapshots (mockbroker/snapshots.py), used by the rooms' `__deepcopy__`.

`copy.deepcopy` goes through `__reduce_ex__` for every object and a dispatch for every value, numbers included;
a snapshot of a broker with a hundred topics copies thousands of them. `copy_attrs` copies an object's attributes
with what cannot change (numbers, strings, bytes, uuids, enum members) kept as they are, plain dicts and lists
copied here, and anything else through `copy.deepcopy` over the same memo (so an object reached twice is copied
once, and the objects the memo maps to themselves are kept). Nothing here knows the model: it imports nothing of
`state/`.
"""

from __future__ import annotations

import copy
import enum
import uuid
from collections.abc import Collection
from typing import Any, TypeVar

T = TypeVar("T")

_IMMUTABLE: frozenset[type] = frozenset({int, str, float, bool, bytes, type(None), uuid.UUID, complex})

# What copy_value does with a value, by its exact type (found once per type, then one dict lookup a value).
_KEEP, _DICT, _LIST, _OTHER = 0, 1, 2, 3
_KINDS: dict[type, int] = {kind: _KEEP for kind in _IMMUTABLE}
_KINDS.update({dict: _DICT, list: _LIST})


def _kind_of(kind: type) -> int:
    """What copy_value does with values of a type (found once per type)."""
    action = _KEEP if issubclass(kind, enum.Enum) else _OTHER
    _KINDS[kind] = action
    return action


def copy_value(value: Any, memo: dict[int, Any]) -> Any:
    """value copied for a snapshot: immutable values as they are, dicts and lists here, the rest by deepcopy."""
    kind = type(value)
    action = _KINDS.get(kind)
    if action is None:
        action = _kind_of(kind)
    if action == _KEEP:
        return value
    done = memo.get(id(value))
    if done is not None:
        return done
    if action == _DICT:
        new_dict: dict[Any, Any] = {}
        memo[id(value)] = new_dict
        for key, item in value.items():
            new_dict[copy_value(key, memo)] = copy_value(item, memo)
        return new_dict
    if action == _LIST:
        new_list: list[Any] = []
        memo[id(value)] = new_list
        new_list.extend([copy_value(item, memo) for item in value])
        return new_list
    return copy.deepcopy(value, memo)


def copy_attrs(source: T, memo: dict[int, Any], *, shallow: Collection[str] = (), empty: Collection[str] = ()) -> T:
    """A new object of source's class with its attributes copied (copy_value); those named in `shallow` (lists or dicts
    of values that never change) copied one level only, those in `empty` made empty lists."""
    new = type(source).__new__(type(source))  # type: ignore[call-overload]
    memo[id(source)] = new
    attrs = new.__dict__
    for key, value in vars(source).items():
        if key in shallow:
            attrs[key] = copy.copy(value)
        elif key in empty:
            attrs[key] = []
        else:
            attrs[key] = copy_value(value, memo)
    return new  # type: ignore[no-any-return]
