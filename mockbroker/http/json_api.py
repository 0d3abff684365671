"""The JSON endpoints of the control API: every operation a tester needs on a running broker.

Each endpoint is a method of `JsonApi` taking a `Request` and returning the JSON payload (or
(status, payload)); it runs on the broker's event loop, so it reads and changes broker state directly.
ROUTES lists them (method, path, handler, one-line summary); app.py routes by it, openapi.py describes it.
What the broker lacks answers 501; what the caller got wrong raises HttpError (request.py).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mockbroker.errors import KafkaError
from mockbroker.http import acls, fault_rules, metrics, share_groups, snapshots, topic_configs
from mockbroker.http.decoded import registry_decoder
from mockbroker.http.records import read_records, record_json
from mockbroker.http.request import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    HttpError,
    Request,
    field,
    int_field,
    jsonable,
    number_field,
    reject_unknown_fields,
    with_api_name,
)
from mockbroker.inspection import batch_info
from mockbroker.protocol.errors import DecodeError, ErrorCode
from mockbroker.state.cluster.leadership import offline_replicas
from mockbroker.state.txn.states import TxnState

if TYPE_CHECKING:
    from mockbroker.server import MockBroker
    from mockbroker.state.cluster.cluster import Partition, Topic

PRODUCE_VERSION = 11  # the Produce version the console's produce action appends as (magic 2 batches)
# Where a number becomes a time or a delay, its range (a 400 naming the field outside it):
MAX_ADVANCE_S = 100 * 365 * 86_400  # one clock/advance moves the broker clock at most 100 years
MAX_LATENCY_MS = 3_600_000  # a node's added latency: at most 1 hour (Kafka clients time out long before)
MAX_TIMESTAMP = 2**63 - 1  # a record timestamp is Kafka's int64 (ms)


def _api_keys() -> dict[str, int]:
    from mockbroker.protocol.messages import api_keys, api_name

    return {api_name(k): k for k in api_keys()}


def _cursor(raw: str | None) -> dict[int, int] | None:
    """cursor=0:12,1:40 -> {0: 12, 1: 40}."""
    if not raw:
        return None
    out: dict[int, int] = {}
    for item in raw.split(","):
        p, sep, o = item.partition(":")
        try:
            out[int(p)] = int(o)
        except ValueError:
            raise HttpError(400, "bad_query", f"cursor={raw!r}: expected partition:offset pairs, e.g. 0:12,1:40") from None
        if not sep or out[int(p)] < -1 or int(p) < 0:
            raise HttpError(400, "bad_query", f"cursor={raw!r}: expected partition:offset pairs, e.g. 0:12,1:40")
    return out


def _undecodable(t: Topic, index: int | None) -> str | None:
    """'the batch of <topic>-<partition> at offset N': the first stored batch whose records do not decode."""
    for p in t.partitions:
        if index is not None and p.index != index:
            continue
        for b in p.log.batches:
            try:
                for _ in b.view().iter_records(0):
                    pass
            except DecodeError:
                return f"the batch of {t.name}-{p.index} at offset {b.base_offset}"
    return None


class JsonApi:
    """The JSON endpoints of one broker. `rates` gives records per second per topic (events.py)."""

    def __init__(self, broker: MockBroker, rates: Callable[[], dict[str, float]] | None = None) -> None:
        self.broker = broker
        self.rates = rates or (lambda: {})

    # -- helpers ---------------------------------------------------------------------------------
    def _topic(self, name: str) -> Topic:
        topic = self.broker.cluster.topic(name)
        if topic is None:
            raise HttpError(404, "unknown_topic", f"no topic {name!r}")
        return topic

    def _partition(self, topic: Topic, index: int | None) -> Partition:
        p = topic.partition(index if index is not None else 0)
        if p is None:
            raise HttpError(404, "unknown_partition",
                            f"topic {topic.name!r} has partitions 0..{len(topic.partitions) - 1}, not {index}")
        return p

    # -- reading ---------------------------------------------------------------------------------
    def index(self, req: Request) -> Any:
        # GET /events and GET /openapi.json are served by app.py before this routing: listed here too.
        return {"endpoints": [f"{m} {p}" for m, p, _, _ in ROUTES] + ["GET /events", "GET /openapi.json"]}

    def health(self, req: Request) -> Any:
        return {"status": "ok", "bootstrap_servers": self.broker.bootstrap_servers}

    def overview(self, req: Request) -> Any:
        cluster = self.broker.cluster
        rates = self.rates()
        topics = []
        for _, t in sorted(cluster.topics.items()):
            item = self._partitions_of(t)
            item["records_per_second"] = round(rates.get(t.name, 0.0), 2)
            item["size_bytes"] = sum(p["size_bytes"] for p in item["partitions"])
            item["records"] = sum(p["high_watermark"] - p["log_start_offset"] for p in item["partitions"])
            topics.append(item)
        return {
            "cluster_id": cluster.cluster_id, "controller_id": cluster.controller_id,
            "nodes": [{"node_id": n.node_id, "rack": n.rack} for n in cluster.nodes.values()],
            "listeners": [{"name": li.name, "node_id": li.node_id, "host": li.host, "port": li.port,
                           "advertised": f"{li.public_host}:{li.public_port}",
                           "security_protocol": li.security_protocol} for li in cluster.listeners],
            "bootstrap_servers": self.broker.bootstrap_servers,
            "now_ms": self.broker.clock.now_ms(),
            "topics": topics,
        }

    def list_topics(self, req: Request) -> Any:
        return {"topics": [self._topic_summary(t) for _, t in sorted(self.broker.cluster.topics.items())]}

    @staticmethod
    def _topic_summary(t: Topic) -> dict[str, Any]:
        return {"name": t.name, "topic_id": str(t.topic_id), "partitions": len(t.partitions),
                "internal": t.internal, "config": t.config.overrides()}

    def _partitions_of(self, t: Topic) -> dict[str, Any]:
        out = self._topic_summary(t)
        out["partitions"] = [
            {"partition": p.index, "leader": p.leader_id, "leader_epoch": p.leader_epoch,
             "replicas": list(p.replicas), "isr": list(p.isr),
             "offline_replicas": offline_replicas(self.broker.cluster, p),
             "log_start_offset": p.log.log_start_offset,
             "high_watermark": p.log.high_watermark, "last_stable_offset": p.log.last_stable_offset,
             "batches": len(p.log.batches), "size_bytes": p.log.size_bytes}
            for p in t.partitions
        ]
        return out

    def get_topic(self, req: Request) -> Any:
        return self._partitions_of(self._topic(req.params["name"]))

    def records(self, req: Request) -> Any:
        t = self._topic(req.params["name"])
        index = req.int_arg("partition", lo=0)
        parts = [self._partition(t, index)] if index is not None else list(t.partitions)
        order = req.choice_arg("order", ("oldest", "newest"))
        limit = req.int_arg("limit", DEFAULT_LIMIT, lo=0, hi=MAX_LIMIT)
        assert limit is not None
        try:
            out, next_offsets = read_records(
                t.name, parts, order=order, offset=req.int_arg("offset", lo=0), limit=limit,
                key=req.arg("key"), from_ms=req.int_arg("from_ms"), to_ms=req.int_arg("to_ms"),
                cursor=_cursor(req.arg("cursor")))
        except DecodeError as exc:  # a stored batch whose records do not decode (no traceback, no 500)
            raise HttpError(422, "corrupt_batch", f"a stored batch of {t.name} does not decode: {exc}; "
                            "its raw bytes are under /topics/{name}/batches?raw=true") from None
        decoded = registry_decoder(self.broker)  # http/decoded.py: registry-framed keys and values decoded
        return {"topic": t.name, "records": [record_json(r) | (decoded(r) if decoded else {}) for r in out],
                "next_offsets": {str(p): o for p, o in next_offsets.items()}}

    def batches(self, req: Request) -> Any:
        t = self._topic(req.params["name"])
        p = self._partition(t, req.int_arg("partition", lo=0))
        raw = req.bool_arg("raw")
        only = req.int_arg("base_offset", lo=0)
        out = []
        for stored in p.log.batches:
            if only is not None and stored.base_offset != only:
                continue
            info = batch_info(stored)
            item = {f.name: jsonable(getattr(info, f.name)) for f in dataclasses.fields(info) if f.name != "raw"}
            item["codec"] = info.codec.name.lower()
            if raw:
                item["raw_base64"] = base64.b64encode(info.raw).decode("ascii")
            out.append(item)
        return {"topic": t.name, "partition": p.index, "batches": out}

    def producers(self, req: Request) -> Any:
        name = req.arg("topic")
        index = req.int_arg("partition", lo=0)
        if index is not None and not name:
            raise HttpError(400, "bad_query", "partition= needs topic=")
        topics = [self._topic(name)] if name else [t for _, t in sorted(self.broker.cluster.topics.items())]
        out = []
        for t in topics:
            parts = [self._partition(t, index)] if index is not None else t.partitions
            for p in parts:
                for e in sorted(p.log.producers.entries.values(), key=lambda e: e.producer_id):
                    out.append({
                        "topic": t.name, "partition": p.index, "producer_id": e.producer_id,
                        "producer_epoch": e.epoch, "last_sequence": e.last_seq,
                        "last_timestamp": e.last_timestamp,
                        "current_txn_start_offset": e.current_txn_first_offset,
                        "coordinator_epoch": e.coordinator_epoch,
                        "batches": [{"first_sequence": b.first_seq, "last_sequence": b.last_seq,
                                     "first_offset": b.first_offset, "last_offset": b.last_offset,
                                     "timestamp": b.timestamp} for b in e.batches],
                    })
        return {"producers": out}

    def transactions(self, req: Request) -> Any:
        now = self.broker.clock.now_ms()
        out = []
        for info in self.broker.transactions():
            item = jsonable(info)
            # How long an open transaction has before the coordinator aborts it.
            open_ = info.start_ms >= 0 and info.state == TxnState.ONGOING.value
            item["timeout_left_ms"] = max(0, info.start_ms + info.timeout_ms - now) if open_ else None
            out.append(item)
        return {"transactions": out}

    def groups(self, req: Request) -> Any:
        return {"groups": jsonable(self.broker.groups())}

    def group(self, req: Request) -> Any:
        """One group: its summary, and committed offsets with the lag of each partition."""
        group_id = req.params["name"]
        groups = [g for g in self.groups(req)["groups"] if isinstance(g, dict) and g.get("group_id") == group_id]
        committed = self.broker.committed(group_id)
        if not groups and not committed:
            raise HttpError(404, "unknown_group", f"no group {group_id!r}")
        # Assigned partitions with no committed offset are listed too, committed and lag unknown (None),
        # as kafka-consumer-groups.sh --describe shows them ("-").
        assigned = {(topic, index) for g in groups for m in g.get("members") or []
                    for topic, indexes in (m.get("assignment") or {}).items() for index in indexes}
        offsets = []
        for topic, index in sorted(set(committed) | assigned):
            offset = committed.get((topic, index))
            p = self.broker.cluster.partition(topic, index)
            hw = p.log.high_watermark if p is not None else None
            offsets.append({"topic": topic, "partition": index, "committed": offset, "high_watermark": hw,
                            "lag": max(0, hw - offset) if hw is not None and offset is not None and offset >= 0
                            else None})
        return {"group": groups[0] if groups else {"group_id": group_id, "state": "Empty", "members": []},
                "offsets": offsets}

    def clock(self, req: Request) -> Any:
        return {"now_ms": self.broker.clock.now_ms()}

    def list_faults(self, req: Request) -> Any:
        return {"faults": [fault_rules.rule_json(r) for r in self.broker.faults.rules]}

    def requests(self, req: Request) -> Any:
        api_key = req.int_arg("api_key", lo=0)
        limit = req.int_arg("limit", 1000, lo=0, hi=100_000)
        assert limit is not None
        got = self.broker.received(api_key)
        got = got[len(got) - limit:] if limit else []
        return {"requests": [with_api_name(r) for r in got]}

    def api_names(self, req: Request) -> Any:
        """API keys and error codes by name (for the console's forms)."""
        return {"api_keys": _api_keys(), "error_codes": {e.name: int(e) for e in ErrorCode}}

    # -- changing --------------------------------------------------------------------------------
    def create_topic(self, req: Request) -> Any:
        body = req.json()
        reject_unknown_fields(body, {"name", "partitions", "config"})
        name = field(body, "name", (str,), "a topic name", required=True)
        partitions = int_field(body, "partitions", lo=1)
        config = field(body, "config", (dict,), "an object of topic settings") or {}
        settings: dict[str, str] = {}
        for key, value in config.items():
            if isinstance(value, bool):
                settings[key] = "true" if value else "false"
            elif isinstance(value, (int, float, str)):
                settings[key] = str(value)
            else:
                raise HttpError(400, "bad_field", f"config {key!r} must be a string, number or boolean")
        try:
            topic = self.broker.create_topic(name, partitions if partitions is not None else -1, settings)
        except KafkaError as exc:
            status = 409 if exc.code == ErrorCode.TOPIC_ALREADY_EXISTS else 400
            raise HttpError(status, exc.code.name.lower(), exc.message or exc.code.name) from None
        return 201, self._partitions_of(topic)

    def delete_topic(self, req: Request) -> Any:
        t = self._topic(req.params["name"])
        self.broker.delete_topic(t.name)
        return {"deleted": t.name}

    def produce(self, req: Request) -> Any:
        """Append one record, as a producer without idempotence would (acks=all)."""
        from mockbroker.protocol.records.builder import build_batch
        from mockbroker.state.log.validation import BatchRejected, RejectedBeforeAppend

        t = self._topic(req.params["name"])
        body = req.json()
        reject_unknown_fields(body, {"key", "value", "headers", "partition", "encoding", "timestamp"})
        encoding = field(body, "encoding", (str,), '"utf-8" or "base64"') or "utf-8"
        if encoding not in ("utf-8", "base64"):
            raise HttpError(400, "bad_field", f'encoding must be "utf-8" or "base64", got {encoding!r}')

        def data(name: str, value: Any) -> bytes | None:
            if value is None:
                return None
            if not isinstance(value, str):
                raise HttpError(400, "bad_field", f"{name} must be a string or null")
            if encoding == "utf-8":
                return value.encode("utf-8")
            try:
                return base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError):
                raise HttpError(400, "bad_field", f"{name} is not valid base64") from None

        key = data("key", body.get("key"))
        value = data("value", body.get("value"))
        raw_headers = field(body, "headers", (list, dict), "a list of {key, value} or an object") or []
        if isinstance(raw_headers, dict):
            raw_headers = [{"key": k, "value": v} for k, v in raw_headers.items()]
        headers: list[tuple[str, bytes | None]] = []
        for h in raw_headers:
            if not isinstance(h, dict) or not isinstance(h.get("key"), str) or not h["key"]:
                raise HttpError(400, "bad_field", "each header needs a non-empty string key")
            headers.append((h["key"], data(f"header {h['key']!r}", h.get("value"))))
        index = int_field(body, "partition", lo=0)
        p = self._partition(t, index if index is not None else 0)
        now = self.broker.clock.now_ms()
        timestamp = int_field(body, "timestamp", lo=0, hi=MAX_TIMESTAMP)
        batch = build_batch([(key, value, headers, timestamp if timestamp is not None else now)])
        try:
            result = self.broker.appender.append_records(p, memoryview(batch), PRODUCE_VERSION, now, None)
        except (BatchRejected, RejectedBeforeAppend, KafkaError) as exc:
            raise HttpError(400, exc.code.name.lower(), getattr(exc, "message", None) or exc.code.name) from None
        return 201, {"topic": t.name, "partition": p.index, "offset": result.base_offset}

    def compact(self, req: Request) -> Any:
        body = req.json()
        reject_unknown_fields(body, {"topic", "partition"})
        name = field(body, "topic", (str,), "a topic name", required=True)
        index = int_field(body, "partition", lo=0)
        compact = self.broker.compact
        if compact is None:  # a broker without a cleaner (tests/docker/test_control_http.py sets it so)
            raise HttpError(501, "not_implemented", "this broker has no log cleaner yet (MockBroker.compact)")
        t = self._topic(name)
        if index is not None:
            self._partition(t, index)
        try:
            result = compact(t.name) if index is None else compact(t.name, index)
        except KafkaError as exc:
            raise HttpError(400, exc.code.name.lower(), exc.message or exc.code.name) from None
        except KeyError as exc:
            raise HttpError(404, "unknown_partition", str(exc.args[0] if exc.args else exc)) from None
        except DecodeError as exc:  # a stored batch whose records do not decode: the cleaner cannot read it
            raise HttpError(409, "corrupt_batch", f"cannot compact {t.name}: {_undecodable(t, index) or 'a batch'} "
                            f"does not decode ({exc}); its raw bytes are under /topics/{{name}}/batches?raw=true") from None
        except ValueError as exc:  # e.g. a topic whose cleanup.policy is not compact
            raise HttpError(400, "bad_request", str(exc)) from None
        return {"compacted": t.name, "partition": index, "result": jsonable(result)}

    def retention(self, req: Request) -> Any:
        body = req.json()
        reject_unknown_fields(body, {"topic"})
        name = field(body, "topic", (str,), "a topic name")
        enforce = self.broker.enforce_retention
        if enforce is None:  # a broker without retention (tests/docker/test_control_http.py sets it so)
            raise HttpError(501, "not_implemented", "this broker has no retention yet (MockBroker.enforce_retention)")
        if name is not None:
            self._topic(name)
        return {"topic": name, "deleted_segments": jsonable(enforce(name))}

    # -- nodes and leadership (MockBroker's failure API) ---------------------------------------------
    def list_nodes(self, req: Request) -> Any:
        return {"nodes": jsonable(self.broker.nodes())}

    @staticmethod
    def _failure_call(fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except KafkaError as exc:
            raise HttpError(400, exc.code.name.lower(), exc.message or exc.code.name) from None
        except (KeyError, ValueError) as exc:
            raise HttpError(404, "unknown_node_or_partition", str(exc.args[0] if exc.args else exc)) from None

    def _node_id(self, req: Request) -> int:
        try:
            node_id = int(req.params["id"])
        except ValueError:
            raise HttpError(404, "unknown_node_or_partition", f"no node {req.params['id']!r}") from None
        if node_id not in self.broker.cluster.nodes:
            raise HttpError(404, "unknown_node_or_partition", f"no node {node_id}")
        return node_id

    def stop_node(self, req: Request) -> Any:
        node_id = self._node_id(req)
        self._failure_call(lambda: self.broker.stop_node(node_id))
        return self.list_nodes(req)

    def start_node(self, req: Request) -> Any:
        node_id = self._node_id(req)
        self._failure_call(lambda: self.broker.start_node(node_id))
        return self.list_nodes(req)

    def stall_node(self, req: Request) -> Any:
        node_id = self._node_id(req)
        self.broker.stall_node(node_id)
        return self.list_nodes(req)

    def resume_node(self, req: Request) -> Any:
        node_id = self._node_id(req)
        self.broker.resume_node(node_id)
        return self.list_nodes(req)

    def set_latency(self, req: Request) -> Any:
        node_id, body = self._node_id(req), req.json()
        reject_unknown_fields(body, {"ms"})
        ms = number_field(body, "ms", "a number of milliseconds", lo=0, hi=MAX_LATENCY_MS, required=True)
        assert ms is not None  # required
        self.broker.set_latency(node_id, ms)
        return {"node": node_id, "latency_ms": self.broker.node_latency_ms.get(node_id, 0)}

    @staticmethod
    def _topic_partition(body: dict[str, Any], extra: set[str]) -> tuple[str, int]:
        reject_unknown_fields(body, {"topic", "partition", *extra})
        topic = field(body, "topic", (str,), "a topic name", required=True)
        partition = int_field(body, "partition", required=True, lo=0)
        assert partition is not None  # required
        return topic, partition

    def move_leader(self, req: Request) -> Any:
        body = req.json()
        topic, partition = self._topic_partition(body, {"node"})
        node = int_field(body, "node", required=True)
        assert node is not None  # required
        self._failure_call(lambda: self.broker.move_leader(topic, partition, node))
        return jsonable(self.broker.partition_state(topic, partition))

    def move_coordinator(self, req: Request) -> Any:
        body = req.json()
        reject_unknown_fields(body, {"group", "transactional_id", "node"})
        group = field(body, "group", (str,), "a group id")
        transactional_id = field(body, "transactional_id", (str,), "a transactional id")
        if (group is None) == (transactional_id is None):
            raise HttpError(400, "bad_field", "name one of group or transactional_id")
        node = int_field(body, "node", required=True)
        assert node is not None  # required
        self._failure_call(lambda: self.broker.move_coordinator(node, group=group, transactional_id=transactional_id))
        return {"group": group, "transactional_id": transactional_id, "node": node}

    def elect_preferred(self, req: Request) -> Any:
        return {"moved": [{"topic": t, "partition": p} for t, p in self.broker.elect_preferred_leaders()]}

    def set_isr(self, req: Request) -> Any:
        body = req.json()
        topic, partition = self._topic_partition(body, {"isr"})
        isr = field(body, "isr", (list,), "a list of node ids", required=True)
        if not all(isinstance(n, int) and not isinstance(n, bool) for n in isr):
            raise HttpError(400, "bad_field", "isr must be a list of node ids")
        self._failure_call(lambda: self.broker.set_isr(topic, partition, isr))
        return jsonable(self.broker.partition_state(topic, partition))

    def advance(self, req: Request) -> Any:
        body = req.json()
        reject_unknown_fields(body, {"seconds"})
        seconds = number_field(body, "seconds", "a number of seconds", lo=0, hi=MAX_ADVANCE_S, required=True)
        assert seconds is not None  # required
        self.broker.clock.advance(seconds)
        return {"now_ms": self.broker.clock.now_ms(), "advanced_seconds": seconds}

    def clear_faults(self, req: Request) -> Any:
        n = len(self.broker.faults.rules)
        self.broker.clear_faults()
        return {"cleared": n}


ROUTES: list[tuple[str, str, Callable[..., Any], str]] = [
    ("GET", "/", JsonApi.index, "the list of endpoints (a browser asking for HTML gets the console)"),
    ("GET", "/health", JsonApi.health, "liveness and the bootstrap servers"),
    ("GET", "/overview", JsonApi.overview, "nodes, listeners, topics with offsets, bytes and record rates"),
    ("GET", "/topics", JsonApi.list_topics, "every topic: name, id, partition count, config overrides"),
    ("POST", "/topics", JsonApi.create_topic, "create a topic {name, partitions?, config?} (201)"),
    ("GET", "/topics/{name}", JsonApi.get_topic, "a topic's partitions: leader, epoch, offsets, batches, bytes"),
    ("DELETE", "/topics/{name}", JsonApi.delete_topic, "delete a topic"),
    ("GET", "/topics/{name}/records", JsonApi.records,
     "decoded records (?partition=&offset=&limit=&order=oldest|newest&key=&from_ms=&to_ms=&cursor=)"),
    ("POST", "/topics/{name}/records", JsonApi.produce,
     "append one record {key?, value?, headers?, partition?, timestamp?, encoding?} (201)"),
    ("GET", "/topics/{name}/batches", JsonApi.batches, "stored batch headers (?partition=&base_offset=&raw=)"),
    ("GET", "/producers", JsonApi.producers, "producer state per partition (?topic=&partition=)"),
    ("GET", "/transactions", JsonApi.transactions, "the transaction coordinator's transactional ids"),
    ("GET", "/groups", JsonApi.groups, "the group coordinator's groups (classic and KIP-848)"),
    ("GET", "/groups/{name}", JsonApi.group, "one group with committed offsets and lag per partition"),
    ("POST", "/compact", JsonApi.compact, "run the log cleaner now {topic, partition?}"),
    ("POST", "/retention", JsonApi.retention, "apply retention now {topic?}"),
    ("GET", "/clock", JsonApi.clock, "the broker clock, ms"),
    ("POST", "/clock/advance", JsonApi.advance, "move the broker clock forward {seconds}"),
    ("GET", "/faults", JsonApi.list_faults, "the fault rules waiting"),
    ("POST", "/faults", fault_rules.add_fault, "add a fault rule {api_key, error | drop | delay | response, count?, "
     "topic?, partition?, node?, probability?} (201)"),
    ("DELETE", "/faults", JsonApi.clear_faults, "remove every fault rule"),
    ("GET", "/requests", JsonApi.requests, "the requests received, most recent last (?api_key=&limit=)"),
    ("GET", "/names", JsonApi.api_names, "API keys and error codes by name"),
    ("GET", "/nodes", JsonApi.list_nodes, "every node: id, rack, alive, listeners"),
    ("POST", "/nodes/{id}/stop", JsonApi.stop_node, "stop a node: listeners close, leaders and coordinators move"),
    ("POST", "/nodes/{id}/start", JsonApi.start_node, "start a stopped node again on the same ports"),
    ("POST", "/nodes/{id}/stall", JsonApi.stall_node, "stop a node's replication: it falls out of the ISRs"),
    ("POST", "/nodes/{id}/resume", JsonApi.resume_node, "a stalled node replicates again"),
    ("POST", "/nodes/{id}/latency", JsonApi.set_latency, "delay a node's answers {ms} (0: none)"),
    ("POST", "/leaders", JsonApi.move_leader, "move a partition's leader {topic, partition, node}"),
    ("POST", "/coordinators", JsonApi.move_coordinator,
     "move the coordinator of a group or transactional id {group | transactional_id, node}"),
    ("POST", "/leaders/preferred", JsonApi.elect_preferred, "give every partition its preferred leader"),
    ("POST", "/isr", JsonApi.set_isr, "set a partition's in-sync replicas {topic, partition, isr}"),
] + acls.ROUTES + topic_configs.ROUTES + metrics.ROUTES + snapshots.ROUTES + share_groups.ROUTES
