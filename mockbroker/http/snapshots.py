"""The control API's snapshot and reset endpoints (listed in json_api.ROUTES): mockbroker/snapshots.py over HTTP.

    POST   /snapshots                  take a snapshot of the whole broker state; 201 {id, taken_ms, topics}
    GET    /snapshots                  the snapshots kept: id, broker time taken, topic names
    POST   /snapshots/{id}/restore     bring back a snapshot's state (client connections are closed)
    DELETE /snapshots/{id}             forget a snapshot
    POST   /reset                      back to the state right after start (a data dir: delete every topic, clear the
                                       fault rules and the request record, as before snapshots existed)

So a docker-compose user can prepare a state once and go back to it between test cases. Snapshots live in the
broker's memory (broker.snapshots.kept), until deleted. A broker with a data dir answers 409
`snapshots_unavailable` to the snapshot routes. Every route changes the broker: CLUSTER ALTER with ACLs on
(http/auth.py), the list of snapshots included.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mockbroker.http.request import HttpError, Request, reject_unknown_fields
from mockbroker.snapshots import Snapshot, SnapshotError


def _describe(snap_id: str, snap: Snapshot) -> dict[str, Any]:
    cluster = next(attrs for room, _obj, attrs in snap.roots if room == "cluster")
    assert cluster is not None
    return {"id": snap_id, "taken_ms": snap.taken_ms, "topics": sorted(cluster["topics"])}


def _no_body(req: Request) -> None:
    reject_unknown_fields(req.json(), set())


def _kept(api: Any, req: Request) -> tuple[str, Snapshot]:
    snap_id = req.params["id"]
    snap = api.broker.snapshots.kept.get(snap_id)
    if snap is None:
        raise HttpError(404, "unknown_snapshot", f"no snapshot {snap_id!r} (GET /snapshots lists them)")
    return snap_id, snap


def _unavailable(exc: SnapshotError) -> HttpError:
    return HttpError(409, "snapshots_unavailable", str(exc))


def take_snapshot(api: Any, req: Request) -> Any:
    _no_body(req)
    try:
        snap = api.broker.snapshot()
    except SnapshotError as exc:
        raise _unavailable(exc) from None
    return 201, _describe(api.broker.snapshots.keep(snap), snap)


def list_snapshots(api: Any, req: Request) -> Any:
    return {"snapshots": [_describe(snap_id, snap) for snap_id, snap in api.broker.snapshots.kept.items()]}


def restore_snapshot(api: Any, req: Request) -> Any:
    _no_body(req)
    snap_id, snap = _kept(api, req)
    try:
        api.broker.restore(snap)
    except SnapshotError as exc:
        raise _unavailable(exc) from None
    return {"restored": snap_id, "topics": api.broker.topics()}


def delete_snapshot(api: Any, req: Request) -> Any:
    snap_id, _snap = _kept(api, req)
    del api.broker.snapshots.kept[snap_id]
    return {"deleted": snap_id}


def reset(api: Any, req: Request) -> Any:
    """The state at start again (memory mode); with a data dir, every topic deleted (the internal ones excepted),
    the fault rules and the request record cleared."""
    _no_body(req)
    broker = api.broker
    before = set(broker.cluster.topics)
    faults = len(broker.faults.rules)
    if broker.storage is None:
        broker.reset()
    else:
        for name, topic in sorted(broker.cluster.topics.items()):
            if not topic.internal:
                broker.delete_topic(name)
        broker.clear_faults()
        broker.requests.clear()
    return {"deleted_topics": sorted(before - set(broker.cluster.topics)), "cleared_faults": faults,
            "topics": broker.topics()}


# The snapshot routes (method, path, handler, summary), appended to json_api.ROUTES.
ROUTES: list[tuple[str, str, Callable[..., Any], str]] = [
    ("POST", "/snapshots", take_snapshot, "take a snapshot of the whole broker state (201, its id)"),
    ("GET", "/snapshots", list_snapshots, "the snapshots kept: id, broker time taken, topics"),
    ("POST", "/snapshots/{id}/restore", restore_snapshot, "bring back a snapshot's state (client connections close)"),
    ("DELETE", "/snapshots/{id}", delete_snapshot, "forget a snapshot"),
    ("POST", "/reset", reset, "back to the state right after start (a data dir: delete every topic, clear faults "
     "and the request record)"),
]
