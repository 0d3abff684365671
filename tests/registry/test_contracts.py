"""Schemas' data contracts (registry/contracts.py) over the REST API: `metadata` and `ruleSet` accepted on
register, part of a schema's identity, returned in the version, lookup and by-id bodies, kept across a
rebuild from `_schemas`; malformed ones refused with 42201. And GET /contexts."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mockbroker.registry.model import SchemaRegistry
from mockbroker.registry.rebuild import replay
from mockbroker.registry.store import encode
from tests.registry.test_http import V1, V2, Client, api, error  # noqa: F401  (the api fixture)

METADATA = {"tags": {"User.a": ["PII"]}, "properties": {"owner": "team-a"}, "sensitive": ["a"]}
RULES = {"domainRules": [{"name": "checkA", "kind": "CONDITION", "mode": "WRITE", "type": "CEL",
                          "expr": "message.a > 0"}]}


async def test_metadata_and_rule_set_are_kept_and_returned(api: Client) -> None:  # noqa: F811
    contract = {"metadata": METADATA, "ruleSet": RULES}
    assert await api("POST", "/subjects/s/versions", {"schema": V1, **contract}) == (200, {"id": 1})
    assert await api("POST", "/subjects/s/versions", {"schema": V1, **contract}) == (200, {"id": 1})  # the same
    status, body = await api("GET", "/subjects/s/versions/1")
    assert status == 200 and (body["metadata"], body["ruleSet"]) == (METADATA, RULES)
    status, body = await api("GET", "/schemas/ids/1")
    assert status == 200 and (body["metadata"], body["ruleSet"]) == (METADATA, RULES)
    status, body = await api("POST", "/subjects/s", {"schema": V1})  # a lookup without them finds the version
    assert (status, body["version"], body["metadata"]) == (200, 1, METADATA)
    assert error(*await api("POST", "/subjects/s", {"schema": V1, "metadata": {"properties": {"owner": "b"}}})) == \
        (404, 40403)


async def test_other_metadata_is_another_schema_and_a_new_version_inherits_it(api: Client) -> None:  # noqa: F811
    assert await api("POST", "/subjects/s/versions", {"schema": V1}) == (200, {"id": 1})
    assert await api("POST", "/subjects/s/versions", {"schema": V1, "metadata": METADATA}) == (200, {"id": 2})
    # without metadata (null is none), the latest version's is taken: the schema of version 2 again
    assert await api("POST", "/subjects/s/versions", {"schema": V1, "metadata": None}) == (200, {"id": 2})
    assert await api("GET", "/subjects/s/versions") == (200, [1, 2])
    status, body = await api("GET", "/subjects/s/versions/1")
    assert status == 200 and "metadata" not in body and "ruleSet" not in body
    assert await api("POST", "/subjects/s/versions", {"schema": V2, "ruleSet": RULES}) == (200, {"id": 3})
    status, body = await api("GET", "/subjects/s/versions/3")  # the rules given, the metadata carried over
    assert status == 200 and (body["metadata"], body["ruleSet"]) == (METADATA, RULES)
    assert await api("POST", "/subjects/t/versions", {"schema": V2}) == (200, {"id": 4})  # another subject: none
    assert "metadata" not in (await api("GET", "/schemas/ids/4"))[1]


@pytest.mark.parametrize("contract", [
    {"metadata": "owner=a"},
    {"metadata": {"tags": {"User.a": "PII"}}},
    {"metadata": {"properties": {"n": 1}}},
    {"metadata": {"sensitive": "a"}},
    {"ruleSet": []},
    {"ruleSet": {"domainRules": {"name": "x"}}},
    {"ruleSet": {"domainRules": [{"kind": "CONDITION", "mode": "WRITE", "type": "CEL"}]}},
    {"ruleSet": {"domainRules": [{"name": "x", "kind": "MAYBE", "mode": "WRITE", "type": "CEL"}]}},
    {"ruleSet": {"domainRules": [{"name": "x", "kind": "CONDITION", "mode": "SOMETIMES", "type": "CEL"}]}},
    {"ruleSet": {"migrationRules": [{"name": "x", "kind": "TRANSFORM", "mode": "UPGRADE"}]}},
    {"ruleSet": {"domainRules": [{"name": "x", "type": "CEL"}, {"name": "x", "type": "CEL"}]}},
])
async def test_a_malformed_contract_is_refused_with_42201(api: Client, contract: dict[str, Any]) -> None:  # noqa: F811
    status, body = await api("POST", "/subjects/s/versions", {"schema": V1, **contract})
    assert error(status, body) == (422, 42201) and body["message"].startswith("Invalid schema: ")
    assert await api("GET", "/subjects") == (200, [])


async def test_contexts_is_the_default_context_alone(api: Client) -> None:  # noqa: F811
    assert await api("GET", "/contexts") == (200, ["."])
    assert error(*await api("POST", "/contexts")) == (405, 405)
    assert error(*await api("GET", "/contexts/.prod")) == (404, 404)


def test_the_contract_is_in_the_schemas_record_and_comes_back_from_it() -> None:
    reg = SchemaRegistry()
    reg.register("s", V1, contract={"schema": V1, "metadata": METADATA, "ruleSet": RULES})
    [(key, value)] = [encode(record) for record in reg.journal]
    assert value is not None
    written = json.loads(value)
    assert (written["metadata"], written["ruleSet"]) == (METADATA, RULES)
    again = SchemaRegistry()
    assert replay(again, [(key, value)]) == 0
    assert again.contracts == {1: {"metadata": METADATA, "ruleSet": RULES}} and again.ids == reg.ids
    assert again.register("s", V1, contract={"metadata": METADATA, "ruleSet": RULES}) == 1  # the same schema
