"""The control API's share-group endpoints (listed in json_api.ROUTES): KIP-932 share groups record by record.

    GET /share-groups          every share group: state, epochs, member and share-partition counts, records
                               acquired now
    GET /share-groups/{name}   one share group: members with their assignments, and each share partition's
                               start and end offsets, the log's high watermark, record counts by state and its
                               in-flight records (?limit= records per partition, 1000 by default): offset,
                               state, delivery count, the member holding the lock and the lock's expiry on
                               the broker clock with the time left

What the broker's share coordinator holds (`MockBroker.share_groups`, ShareCoordinator.describe): locks that
ran out by the broker clock's time are ended first, as any share request would. No I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mockbroker.http.request import HttpError, Request

DEFAULT_RECORDS = 1000
MAX_RECORDS = 10_000
STATES = ("AVAILABLE", "ACQUIRED", "ACKNOWLEDGED", "ARCHIVED")


def _acquired(group: dict[str, Any]) -> int:
    return sum(1 for sp in group["partitions"].values() for r in sp["records"] if r["state"] == "ACQUIRED")


def list_share_groups(api: Any, req: Request) -> Any:
    groups = api.broker.share_groups()
    return {"share_groups": [{"group_id": gid, "state": g["state"], "group_epoch": g["group_epoch"],
                              "assignment_epoch": g["assignment_epoch"], "members": len(g["members"]),
                              "share_partitions": len(g["partitions"]), "acquired_records": _acquired(g)}
                             for gid, g in groups.items()]}


def _partition(api: Any, key: str, sp: dict[str, Any], now_ms: int, limit: int) -> dict[str, Any]:
    topic, _, index = key.rpartition("-")
    partition = api.broker.cluster.partition(topic, int(index))
    records = sp["records"]
    counts = {state: sum(1 for r in records if r["state"] == state) for state in STATES}
    shown = [{**r, "lock_left_ms": None if r["lock_expiry_ms"] is None else max(0, r["lock_expiry_ms"] - now_ms)}
             for r in records[:limit]]
    return {"topic": topic, "partition": int(index), "start_offset": sp["start_offset"],
            "end_offset": sp["end_offset"],
            "high_watermark": partition.log.high_watermark if partition is not None else None,
            "counts": counts, "records_total": len(records), "records": shown}


def share_group(api: Any, req: Request) -> Any:
    group_id = req.params["name"]
    limit = req.int_arg("limit", DEFAULT_RECORDS, lo=0, hi=MAX_RECORDS)
    assert limit is not None  # defaulted
    now_ms = api.broker.clock.now_ms()
    group = api.broker.share_groups().get(group_id)
    if group is None:
        raise HttpError(404, "unknown_group", f"no share group {group_id!r}")
    members = [{"member_id": mid, **m} for mid, m in sorted(group["members"].items())]
    partitions = [_partition(api, key, sp, now_ms, limit) for key, sp in group["partitions"].items()]
    partitions.sort(key=lambda p: (p["topic"], p["partition"]))
    return {"now_ms": now_ms,
            "group": {"group_id": group_id, "state": group["state"], "group_epoch": group["group_epoch"],
                      "assignment_epoch": group["assignment_epoch"], "members": members},
            "partitions": partitions}


# The share-group routes (method, path, handler, summary), appended to json_api.ROUTES.
ROUTES: list[tuple[str, str, Callable[..., Any], str]] = [
    ("GET", "/share-groups", list_share_groups, "the share groups (KIP-932): state, epochs, members, records acquired"),
    ("GET", "/share-groups/{name}", share_group,
     "one share group: members and assignments, each share partition's offsets and in-flight records (?limit=)"),
]
