"""Walk a broker's whole state into plain values, to compare two moments field by field (snapshot tests).

`state_of(broker)` (call on the broker's loop) walks every room mockbroker/snapshots.py restores, attribute by
attribute, down to ints and bytes: a stored batch becomes its fields and its bytes (a log's BatchStore the
list of its batches, whatever its chunks' layout), a timer its due time, an
object seen earlier in the walk a reference to where it was first seen (so sharing is compared too), a room
or a service of the broker (clock, scheduler, nodes) its name. `differences(a, b)` lists the paths where two
walks differ, with both values, so a failing test says which field came back wrong.
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import random
import types
import uuid
from typing import Any

from mockbroker.scheduler import Timer
from mockbroker.server import MockBroker
from mockbroker.snapshots import rooms
from mockbroker.state.log.batch_store import BatchStore, StoredBatches

_ATOMS = (type(None), bool, int, float, str, bytes, complex, uuid.UUID)
# Left out of a snapshot on purpose (mockbroker/snapshots.py): a log's append listeners are parked fetches';
# the next producer id only moves forward (test_snapshots.py checks it apart).
_NOT_STATE = {("PartitionLog", "_listeners"), ("Cluster", "_next_producer_id"), ("ShareCoordinator", "listeners")}


def state_of(broker: MockBroker) -> dict[str, Any]:
    """The broker's state as plain values: {room: walk}, plus the clock's offset (run on the broker's loop)."""
    roots = rooms(broker)
    named: dict[int, str] = {id(obj): f"<room {room}>" for room, obj in roots if obj is not None}
    for name, service in (("clock", broker.clock), ("scheduler", broker.scheduler), ("security", broker.security),
                          ("settings", broker.settings), ("broker", broker)):
        named[id(service)] = f"<service {name}>"
    for node_id, node in broker.nodes.items():
        named[id(node)] = f"<node {node_id}>"
    seen: dict[int, str] = {}
    out: dict[str, Any] = {room: None if obj is None else _walk_attrs(obj, room, named, seen) for room, obj in roots}
    out["clock"] = (broker.clock._offset_ms, broker.clock._frozen_ms)
    return out


def _walk_attrs(obj: Any, path: str, named: dict[int, str], seen: dict[int, str]) -> dict[str, Any]:
    seen[id(obj)] = path
    return {key: _walk(value, f"{path}.{key}", named, seen) for key, value in vars(obj).items()
            if (type(obj).__name__, key) not in _NOT_STATE}


def _walk(x: Any, path: str, named: dict[int, str], seen: dict[int, str]) -> Any:
    if isinstance(x, enum.Enum):
        return f"{type(x).__name__}.{x.name}"
    if isinstance(x, _ATOMS):
        return x
    if isinstance(x, memoryview | bytearray):
        return ("bytes", bytes(x))
    if id(x) in named:
        return named[id(x)]
    if isinstance(x, types.FunctionType | types.MethodType | types.BuiltinFunctionType):
        return ("callable", getattr(x, "__qualname__", type(x).__name__))
    if isinstance(x, Timer):
        return ("timer", x.due_ms, x.cancelled)
    if id(x) in seen:
        return ("same as", seen[id(x)])
    seen[id(x)] = path
    if isinstance(x, dict):
        return [(_walk(k, f"{path}[key]", named, seen), _walk(v, f"{path}[{k!r}]", named, seen)) for k, v in x.items()]
    if isinstance(x, list | tuple | collections.deque):
        return [type(x).__name__, *(_walk(v, f"{path}[{i}]", named, seen) for i, v in enumerate(x))]
    if isinstance(x, set | frozenset):
        return ["set", *sorted((_walk(v, f"{path}{{}}", named, seen) for v in x), key=repr)]
    if isinstance(x, random.Random):
        return ("random", x.getstate())
    if isinstance(x, BatchStore):  # what it holds, not how its chunks are laid out: the batches, then the indexes
        # (each StoredBatch is made for the walk and dropped: walked as plain fields, never entered in `seen`)
        batches = [{f.name: ("bytes", bytes(v)) if isinstance(v := getattr(b, f.name), memoryview) else v
                    for f in dataclasses.fields(b)} for b in StoredBatches(x)]
        return ("BatchStore", batches, list(x.base_offsets), list(x.max_ts_running))
    if hasattr(x, "__dict__") or hasattr(type(x), "__slots__"):
        fields = dict(vars(x)) if hasattr(x, "__dict__") else {}
        for cls in type(x).__mro__:
            for slot in getattr(cls, "__slots__", ()):
                if hasattr(x, slot):
                    fields[slot] = getattr(x, slot)
        return (type(x).__name__, {k: _walk(v, f"{path}.{k}", named, seen) for k, v in fields.items()
                                   if (type(x).__name__, k) not in _NOT_STATE})
    text = repr(x)
    return (type(x).__name__, text if " at 0x" not in text else None)


def differences(a: Any, b: Any, path: str = "", limit: int = 20) -> list[str]:
    """Where two walks differ: "path: a != b", at most `limit` of them."""
    out: list[str] = []
    _diff(a, b, path, out, limit)
    return out


def _diff(a: Any, b: Any, path: str, out: list[str], limit: int) -> None:
    if len(out) >= limit or a == b:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for key in dict.fromkeys([*a, *b]):
            _diff(a.get(key, "<missing>"), b.get(key, "<missing>"), f"{path}.{key}", out, limit)
        return
    if isinstance(a, list | tuple) and isinstance(b, list | tuple) and len(a) == len(b) and type(a) is type(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _diff(x, y, f"{path}[{i}]", out, limit)
        return
    out.append(f"{path}: {_short(a)} != {_short(b)}")


def _short(x: Any) -> str:
    text = repr(x)
    return text if len(text) < 300 else text[:300] + "..."
