"""Fast copies of the model's objects for snapshots (mockbroker/snapshots.py), used by the rooms' `__deepcopy__`.

`copy.deepcopy` goes through `__reduce_ex__` for every object and a dispatch for every value, numbers included;
a snapshot of a broker with a hundred topics copies thousands of them. `copy_value` gives the same copy faster, by
what the value's exact type is (found once per type, then one dict lookup a value):

- what cannot change (numbers, strings, bytes, uuids, enum members, functions, classes) is kept as it is;
- plain dicts, lists and tuples are copied here (a tuple whose items all stay the same is kept, as deepcopy does);
- an object whose class has `__deepcopy__` gets it called directly (without deepcopy's dispatch);
- a plain object (a Python class without `__slots__`, `__reduce__`, `__getstate__`, `__setstate__` or `__getattr__` of
  its own, as a dataclass) gets its `__dict__` copied value by value, which is what deepcopy does for it;
- a `random.Random` is copied through its state (deepcopy would seed a new one, then copy 625 numbers one by one);
- anything else goes through `copy.deepcopy`.

Every copy goes over the same memo (so an object reached twice is copied once, and the objects the memo maps to
themselves are kept). Nothing here knows the model: it imports nothing of `state/`.
"""

from __future__ import annotations

import copy
import copyreg
import enum
import random
import types
import uuid
from collections.abc import Callable, Collection
from typing import Any, TypeVar

T = TypeVar("T")

_IMMUTABLE: frozenset[type] = frozenset({int, str, float, bool, bytes, type(None), uuid.UUID, complex,
                                         types.FunctionType, types.BuiltinFunctionType, type})

# What copy_value does with a value, by its exact type.
_KEEP, _DICT, _LIST, _TUPLE, _OWN, _PLAIN, _OTHER = range(7)
_KINDS: dict[type, int] = {kind: _KEEP for kind in _IMMUTABLE}
_KINDS.update({dict: _DICT, list: _LIST, tuple: _TUPLE})
_COPIERS: dict[type, Callable[[Any, dict[int, Any]], Any]] = {}  # for _OWN: the type's own copy
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement (not a built-in type)


def _copy_random(value: random.Random, memo: dict[int, Any]) -> random.Random:
    """A random.Random with the same state (the same numbers come next)."""
    new = random.Random.__new__(random.Random)
    new.setstate(value.getstate())
    return new


def _call_own_deepcopy(value: Any, memo: dict[int, Any]) -> Any:
    return value.__deepcopy__(memo)


def _is_plain(kind: type) -> bool:
    """Whether deepcopy copies kind's objects as a new object with its __dict__'s values copied (and nothing else)."""
    mro = kind.__mro__
    return (mro[-1] is object and all(c.__flags__ & _HEAPTYPE for c in mro[:-1])
            and kind.__new__ is object.__new__
            and kind.__reduce_ex__ is object.__reduce_ex__ and kind.__reduce__ is object.__reduce__  # type: ignore[comparison-overlap]
            and getattr(kind, "__getstate__", None) is object.__getstate__ and not hasattr(kind, "__setstate__")
            and not hasattr(kind, "__getattr__")  # deepcopy asks the object itself for __deepcopy__: it might answer
            and not any("__slots__" in vars(c) for c in mro) and kind not in copyreg.dispatch_table)


def _kind_of(kind: type) -> int:
    """What copy_value does with values of a type (found once per type)."""
    copier = getattr(kind, "__deepcopy__", None)
    if copier is not None and not isinstance(copier, types.FunctionType):  # not a plain method: called as deepcopy does
        copier = _call_own_deepcopy
    if issubclass(kind, enum.Enum):
        action = _KEEP
    elif kind is random.Random:
        action = _OWN
        _COPIERS[kind] = _copy_random
    elif copier is not None and kind not in copyreg.dispatch_table:
        action = _OWN
        _COPIERS[kind] = copier
    elif _is_plain(kind):
        action = _PLAIN
    else:
        action = _OTHER
    _KINDS[kind] = action
    return action


def copy_value(value: Any, memo: dict[int, Any]) -> Any:
    """value copied for a snapshot, as copy.deepcopy(value, memo) would, faster (module header)."""
    kind = type(value)
    action = _KINDS.get(kind)
    if action is None:
        action = _kind_of(kind)
    if action == _KEEP:
        return value
    done = memo.get(id(value))
    if done is not None:
        return done
    if action == _OWN:
        new = _COPIERS[kind](value, memo)
        if new is not value:
            memo[id(value)] = new
        return new
    if action == _DICT:
        new_dict: dict[Any, Any] = {}
        memo[id(value)] = new_dict
        kinds = _KINDS
        for key, item in value.items():
            if kinds.get(type(key)) != _KEEP:
                key = copy_value(key, memo)
            new_dict[key] = item if kinds.get(type(item)) == _KEEP else copy_value(item, memo)
        return new_dict
    if action == _LIST:
        new_list: list[Any] = []
        memo[id(value)] = new_list
        kinds = _KINDS
        for item in value:
            kind = type(item)
            action = kinds.get(kind)
            if action == _KEEP:
                new_list.append(item)
            elif action == _OWN and id(item) not in memo:  # a class's own copy, one call less (a topic's partitions)
                twin = _COPIERS[kind](item, memo)
                if twin is not item:
                    memo[id(item)] = twin
                new_list.append(twin)
            else:
                new_list.append(copy_value(item, memo))
        return new_list
    if action == _TUPLE:
        kinds = _KINDS
        items = [item if kinds.get(type(item)) == _KEEP else copy_value(item, memo) for item in value]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value  # nothing in it changes: the tuple itself is kept (not in memo, as deepcopy)
        done = memo.get(id(value))  # a tuple that holds (through a list, say) itself: the copy made meanwhile
        if done is not None:
            return done
        new_tuple = tuple(items)
        memo[id(value)] = new_tuple
        return new_tuple
    if action == _PLAIN:
        new = object.__new__(kind)
        memo[id(value)] = new
        kinds = _KINDS
        attrs = new.__dict__
        for key, item in value.__dict__.items():
            attrs[key] = item if kinds.get(type(item)) == _KEEP else copy_value(item, memo)
        return new
    return copy.deepcopy(value, memo)


def shallow_copy(value: T) -> T:
    """value copied one level (a list or dict of values that never change), as copy.copy does, faster."""
    kind = type(value)
    if kind is list or kind is dict:
        return value.copy()  # type: ignore[attr-defined,no-any-return]
    return copy.copy(value)


def copy_attrs(source: T, memo: dict[int, Any], *, shallow: Collection[str] = (), empty: Collection[str] = ()) -> T:
    """A new object of source's class with its attributes copied (copy_value); those named in `shallow` (lists or dicts
    of values that never change) copied one level only, those in `empty` made empty lists."""
    new = type(source).__new__(type(source))  # type: ignore[call-overload]
    memo[id(source)] = new
    attrs = new.__dict__
    kinds = _KINDS
    for key, value in vars(source).items():
        kind = type(value)
        action = kinds.get(kind)
        if action == _KEEP:
            attrs[key] = value
        elif key in shallow:
            attrs[key] = value.copy() if kind is list or kind is dict else copy.copy(value)
        elif key in empty:
            attrs[key] = []
        else:
            done = memo.get(id(value))  # reached before (a topic from its partitions, a config from its topic)
            if done is not None:
                attrs[key] = done
            elif action == _OWN:  # what copy_value would do, one call less (the log of a partition, say)
                attrs[key] = done = _COPIERS[kind](value, memo)
                if done is not value:
                    memo[id(value)] = done
            else:
                attrs[key] = copy_value(value, memo)
    return new  # type: ignore[no-any-return]
