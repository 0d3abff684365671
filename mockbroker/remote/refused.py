"""What the remote target cannot do: `NotOnRemoteTarget`, and the MockBroker calls a real cluster has no
Kafka request for (the clock, the cleaner on demand, node failures, faults, snapshots, the model's objects).

`EMBEDDED_ONLY` maps each such public name of MockBroker to why; RemoteBroker answers each with
NotOnRemoteTarget naming the call and the target. docs/remote-target.md's table lists the same names, and
tests/remote/test_remote_docs.py checks that every public name of MockBroker (and the attributes tests read:
clock, cluster, nodes) is either served by RemoteBroker or in this table.
"""

from __future__ import annotations

from typing import Any


class NotOnRemoteTarget(RuntimeError):
    """A test-API call the remote target (a real cluster reached over Kafka's protocol) cannot answer."""

    def __init__(self, call: str, target: str, why: str) -> None:
        super().__init__(f"{call}() is not available on the remote target {target}: {why} "
                         f"(mark the test @pytest.mark.embedded_only to skip it on a remote run)")
        self.call = call
        self.target = target
        self.why = why


_NO_CLOCK = "a real cluster runs on its own wall clock"
_NO_FAULTS = "faults need the embedded broker or the fault proxy (RemoteBroker(..., proxy=True), --kafka-proxy)"
_NO_HOOKS = "request hooks need the embedded broker or the fault proxy (RemoteBroker(..., proxy=True), --kafka-proxy)"
_NO_NODES = "a real cluster's nodes are not this process's to stop or reshape"
_NO_MODEL = "the broker's in-process model objects do not exist on a real cluster"
_NO_STATE = "a real cluster's state cannot be copied or put back"
_NOT_YET = "not yet built for the remote target"

EMBEDDED_ONLY: dict[str, str] = {
    "clock": _NO_CLOCK, "cluster": _NO_MODEL, "nodes": _NO_MODEL,
    "compact": "a real cluster's log cleaner runs on its own schedule",
    "enforce_retention": "a real cluster applies retention on its own schedule",
    "segments": "segments are not visible over Kafka's protocol",
    "stop_node": _NO_NODES, "start_node": _NO_NODES, "stall_node": _NO_NODES, "resume_node": _NO_NODES,
    "set_latency": _NO_NODES, "set_isr": _NO_NODES, "move_leader": _NO_NODES, "move_coordinator": _NO_NODES,
    "elect_preferred_leaders": _NOT_YET, "partition_state": _NOT_YET,
    "inject": _NO_FAULTS, "clear_faults": _NO_FAULTS,
    "intercept": _NO_HOOKS, "clear_intercepts": _NO_HOOKS,
    "received": "the requests other clients send are seen only by the embedded broker or the fault proxy "
                "(RemoteBroker(..., proxy=True), --kafka-proxy)",
    "snapshot": _NO_STATE, "restore": _NO_STATE, "reset": _NO_STATE,
    "group_coordinator": _NO_MODEL, "txn_coordinator": _NO_MODEL, "fetch_sessions": _NO_MODEL,
    "appender": _NO_MODEL, "settings": _NO_MODEL, "seed": _NO_MODEL, "from_settings": _NO_MODEL,
    "start": "the remote target is a running cluster: nothing to start",
    "stop": "the remote target is a running cluster: nothing to stop (close() ends the connections)",
    "run_in_thread": "the remote target is a running cluster: nothing to run",
    "record_request": _NO_MODEL, "connection_opened": _NO_MODEL, "connection_closed": _NO_MODEL,
    "listeners": _NO_MODEL, "listener": _NO_MODEL, "bootstrap_for": _NO_MODEL, "tls": _NO_MODEL,
    "host": "a cluster has several hosts: use bootstrap_servers", "port": "use bootstrap_servers",
    "node_id": _NO_MODEL,
    "schema_registry_url": "the embedded Schema Registry only", "schemas": "the embedded Schema Registry only",
    "decoded_records": "the embedded Schema Registry only",
    "set_quota": _NOT_YET, "quotas": _NOT_YET, "share_groups": _NOT_YET,
    "client_metrics": "pushed client telemetry is kept by the embedded broker only",
    "subscribe_client_metrics": _NOT_YET,
}


# What the fault proxy serves (mockbroker/remote/proxy.py) when the target runs with it (proxy=True).
PROXIED = frozenset({"inject", "clear_faults", "received", "intercept", "clear_intercepts"})


def refusing(name: str, why: str) -> Any:
    """A property that raises NotOnRemoteTarget when read (a call reads it first, so calls raise too); a
    PROXIED name gives the fault proxy's method instead when the target has one (its `proxy`)."""
    def get(self: Any) -> Any:
        proxy = getattr(self, "proxy", None) if name in PROXIED else None
        if proxy is not None:
            return getattr(proxy, name)
        raise NotOnRemoteTarget(name, self.bootstrap_servers, why)
    get.__doc__ = f"Not on the remote target: {why}."
    return property(get)
