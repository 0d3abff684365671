"""The shared Difference (registry/differences.py): compatibility by each type's rules, Confluent's message."""

from __future__ import annotations

from mockbroker.registry import json_schema, protobuf
from mockbroker.registry.differences import Difference, Rules


def test_compatible_is_decided_by_the_rules_the_difference_carries() -> None:
    rules = Rules(frozenset({"FIELD_ADDED"}))
    assert Difference("FIELD_ADDED", "#/", rules).compatible
    assert not Difference("FIELD_REMOVED", "#/", rules).compatible


def test_each_types_rules_word_its_messages() -> None:
    json_change = Difference("MAX_LENGTH_DECREASED", "#/properties/a", json_schema.RULES)
    assert json_change.message("new", "old") == (
        '{errorType:"MAX_LENGTH_DECREASED", description:"The value at path \'#/properties/a\' in the new schema '
        'is less than its value in the old schema"}')
    proto_change = Difference("FIELD_KIND_CHANGED", "#/M/1", protobuf.RULES)
    assert proto_change.message("old", "new") == (
        '{errorType:"FIELD_KIND_CHANGED", description:"The old schema has a change at path \'#/M/1\' that the new '
        'schema\'s data does not allow (FIELD_KIND_CHANGED)"}')


def test_a_path_holding_a_placeholder_is_left_as_it_is() -> None:
    rules = Rules(frozenset(), {"X": "at '{path}' the {reader} schema"})
    assert Difference("X", "#/{reader}", rules).description("new", "old") == "at '#/{reader}' the new schema"
