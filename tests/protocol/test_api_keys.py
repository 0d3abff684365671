"""The ApiKey enum (protocol/api_keys.py) names every API key of the generated schemas, as they spell it."""

from __future__ import annotations

import re

from mockbroker.protocol.api_keys import ApiKey
from mockbroker.protocol.messages import api_keys, api_name


def test_every_schema_api_key_has_its_schema_name() -> None:
    expected = {re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", api_name(k)).upper(): k for k in api_keys()}
    assert {key.name: int(key) for key in ApiKey} == expected


def test_a_key_is_its_number() -> None:
    assert ApiKey.PRODUCE == 0 and ApiKey.DESCRIBE_TOPIC_PARTITIONS == 75
    assert {ApiKey.FETCH: "x"}[1] == "x"
