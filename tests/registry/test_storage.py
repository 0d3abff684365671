"""The registry kept in its `_schemas` topic (registry/store.py, rebuild.py): Confluent's key and value JSON
for each change, and on a data dir everything back after a restart, ids counting on from where they were."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest

from mockbroker import MockBroker
from mockbroker.registry.model import SchemaRegistry
from mockbroker.registry.rebuild import replay
from mockbroker.registry.store import encode
from tests.registry.test_ways_in import register

V1 = json.dumps({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]})
V2 = json.dumps({"type": "record", "name": "R", "fields": [{"name": "a", "type": "long"}]})


def records(broker: MockBroker) -> list[tuple[dict[str, object], dict[str, object] | None]]:
    return [(json.loads(r.key or b""), json.loads(r.value) if r.value is not None else None)
            for r in broker.records("_schemas")]


def test_changes_are_written_as_confluents_records() -> None:
    reg = SchemaRegistry()
    reg.register("s", V1)
    reg.set_compatibility("s", "NONE")
    reg.set_mode(None, "READWRITE")
    reg.delete_version("s", 1)
    reg.delete_version("s", 1, permanent=True)
    assert [encode(r) for r in reg.journal] == [
        (b'{"keytype":"SCHEMA","subject":"s","version":1,"magic":1}',
         b'{"subject":"s","version":1,"id":1,"schema":' + json.dumps(json.dumps(json.loads(V1),
                                                                                 separators=(",", ":"))).encode()
         + b',"deleted":false}'),
        (b'{"keytype":"CONFIG","subject":"s","magic":0}', b'{"compatibilityLevel":"NONE"}'),
        (b'{"keytype":"MODE","subject":null,"magic":0}', b'{"mode":"READWRITE"}'),
        (b'{"keytype":"SCHEMA","subject":"s","version":1,"magic":1}',
         encode(reg.journal[0])[1].replace(b'"deleted":false', b'"deleted":true')),  # type: ignore[union-attr]
        (b'{"keytype":"SCHEMA","subject":"s","version":1,"magic":1}', None),
    ]


def test_replay_rebuilds_the_same_registry_and_skips_what_it_cannot_read() -> None:
    reg = SchemaRegistry(compatibility="NONE")
    reg.register("a", V1)
    reg.register("a", V2)
    reg.register("b", V1)
    reg.delete_subject("b")
    reg.set_compatibility("a", "FULL")
    reg.set_mode("a", "READONLY")
    raw = [encode(r) for r in reg.journal]
    raw[1:1] = [(b"{", b"{}"), (b'{"keytype":"WHAT"}', None), (b'{"keytype":"NOOP","magic":0}', None),
                (b'{"keytype":"SCHEMA","subject":"x","version":1,"magic":1}', b'{"id":9,"schema":"nope"}')]
    again = SchemaRegistry()
    assert replay(again, raw) == 3  # the broken key, the unknown keytype, the invalid schema; NOOP is fine
    assert again.subjects == reg.subjects and again.ids == reg.ids and again.next_id == reg.next_id
    assert again.subject_compatibility == {"a": "FULL"} and again.subject_mode == {"a": "READONLY"}
    assert again.compatibility is None and again.compatibility_of(None) == "BACKWARD"  # never written: the default
    assert again.journal == []


def test_the_registry_comes_back_after_a_restart_on_a_data_dir(tmp_path: Path) -> None:
    with MockBroker(schema_registry=True, data_dir=tmp_path).run_in_thread() as broker:
        url = broker.schema_registry_url
        assert register(url, "a") == {"id": 1}
        assert register(url, "b") == {"id": 1}
        req = urllib.request.Request(f"{url}/config/a", method="PUT", data=b'{"compatibility": "NONE"}')
        urllib.request.urlopen(req, timeout=10).close()
        keys = [k["keytype"] for k, _ in records(broker)]
        assert keys == ["NOOP", "SCHEMA", "SCHEMA", "CONFIG"]  # NOOP: written at start
        topic = broker.cluster.topic("_schemas")
        assert topic is not None and len(topic.partitions) == 1
        assert topic.config.get("cleanup.policy") == "compact"
    with MockBroker(schema_registry=True, data_dir=tmp_path).run_in_thread() as broker:
        reg = broker.schema_registry.registry  # type: ignore[union-attr]
        assert reg.subject_names() == ["a", "b"] and reg.compatibility_of("a") == "NONE"
        assert [v.version for v in reg.versions("a")] == [1]
        other = json.dumps({"type": "record", "name": "Q", "fields": []})
        assert register(broker.schema_registry_url, "c", other) == {"id": 2}  # ids count on from the highest
        assert [k["keytype"] for k, _ in records(broker)] == ["NOOP", "SCHEMA", "SCHEMA", "CONFIG", "NOOP", "SCHEMA"]


@pytest.mark.mockbroker(schema_registry=True)
def test_in_memory_the_topic_is_there_too(mockbroker: MockBroker) -> None:
    assert "_schemas" in mockbroker.topics()
    register(mockbroker.schema_registry_url, "s")
    assert [k["keytype"] for k, _ in records(mockbroker)] == ["NOOP", "SCHEMA"]
