"""A schema's data contract as Confluent's registry (7.4+) keeps it beside the schema: `metadata` (tags,
properties, sensitive field names) and `ruleSet` (migration, domain and encoding rules). Accepted on register
and lookup, checked for shape, kept with the schema's id (they are part of what makes two schemas one id, as
in Confluent's registry), written in the `_schemas` records and returned in every schema body.

A version registered without one of them takes the latest live version's (as Confluent's registry carries
them over); sent as null, it is not given.

Not applied: no rule is executed (CEL conditions, field transforms, encryption, migrations are the clients'
serdes' and Confluent's rule executors' business), and the subject configs' defaultMetadata,
overrideMetadata, defaultRuleSet and overrideRuleSet are not served (so nothing is merged from them).
"""

from __future__ import annotations

import json
from typing import Any

FIELDS = ("metadata", "ruleSet")
RULE_LISTS = ("migrationRules", "domainRules", "encodingRules")
RULE_KINDS = ("TRANSFORM", "CONDITION")
RULE_MODES = ("UPGRADE", "DOWNGRADE", "UPDOWN", "WRITE", "READ", "WRITEREAD")
Contract = dict[str, Any]  # {"metadata": {...}, "ruleSet": {...}}: those given


def read(body: dict[str, Any]) -> Contract:
    """The metadata and ruleSet of a request body or a `_schemas` record (null or absent: none); ValueError
    saying what is wrong with a malformed one."""
    contract: Contract = {}
    metadata, rule_set = body.get("metadata"), body.get("ruleSet")
    if metadata is not None:
        _check_metadata(metadata)
        contract["metadata"] = metadata
    if rule_set is not None:
        _check_rule_set(rule_set)
        contract["ruleSet"] = rule_set
    return contract


def inherit(given: Contract, previous: Contract) -> Contract:
    """What a new version holds: each of metadata and ruleSet as given, else the previous version's (Confluent's
    registry carries them over to a version registered without them)."""
    return {name: given.get(name, previous.get(name)) for name in FIELDS if name in given or name in previous}


def identity(contract: Contract | None) -> str:
    """The contract's part of a schema's identity (empty without one)."""
    return f" {json.dumps(contract, sort_keys=True, separators=(',', ':'))}" if contract else ""


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _check_metadata(metadata: Any) -> None:
    if not isinstance(metadata, dict):
        raise ValueError("metadata must be an object")
    tags, properties, sensitive = metadata.get("tags"), metadata.get("properties"), metadata.get("sensitive")
    if tags is not None and not (isinstance(tags, dict) and all(_strings(v) for v in tags.values())):
        raise ValueError("metadata.tags must map each field path to a list of tag names")
    if properties is not None and not (isinstance(properties, dict)
                                       and all(isinstance(v, str) for v in properties.values())):
        raise ValueError("metadata.properties must map names to string values")
    if sensitive is not None and not _strings(sensitive):
        raise ValueError("metadata.sensitive must be a list of names")


def _check_rule_set(rule_set: Any) -> None:
    if not isinstance(rule_set, dict):
        raise ValueError("ruleSet must be an object")
    for name in RULE_LISTS:
        rules = rule_set.get(name)
        if rules is None:
            continue
        if not isinstance(rules, list):
            raise ValueError(f"ruleSet.{name} must be a list of rules")
        seen: set[str] = set()
        for rule in rules:
            if not isinstance(rule, dict) or not isinstance(rule.get("name"), str) or not rule["name"]:
                raise ValueError(f"every rule of ruleSet.{name} needs a name")
            if rule["name"] in seen:
                raise ValueError(f"ruleSet.{name} names rule {rule['name']!r} twice")
            seen.add(rule["name"])
            if rule.get("kind", "TRANSFORM") not in RULE_KINDS:
                raise ValueError(f"rule {rule['name']!r}: kind must be one of {', '.join(RULE_KINDS)}")
            if rule.get("mode", "WRITEREAD") not in RULE_MODES:
                raise ValueError(f"rule {rule['name']!r}: mode must be one of {', '.join(RULE_MODES)}")
            if not isinstance(rule.get("type"), str) or not rule["type"]:
                raise ValueError(f"rule {rule['name']!r} needs a type (CEL, CEL_FIELD, ENCRYPT, JSONATA, ...)")
