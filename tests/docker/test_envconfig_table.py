"""The environment table (mockbroker.envconfig.ENVIRONMENT) is consistent data: each spelling names its
row's setting by the images' own rule, no variable is listed twice, and every spelling is read."""

from __future__ import annotations

import pytest

from mockbroker.envconfig import ENVIRONMENT, EnvVar, build_settings, env_to_setting, settings_from_env

ROWS = [pytest.param(row, id=row.kafka) for row in ENVIRONMENT]


def test_no_variable_is_listed_twice() -> None:
    spellings = [name for row in ENVIRONMENT for name in row.spellings]
    assert len(spellings) == len(set(spellings))


@pytest.mark.parametrize("row", ROWS)
def test_kafka_and_bitnami_spellings_follow_the_images_rule(row: EnvVar) -> None:
    if row.bitnami is not None and row.bitnami.startswith("KAFKA_CFG_"):
        assert row.kafka == "KAFKA_" + row.bitnami[len("KAFKA_CFG_"):]
        assert env_to_setting(row.bitnami[len("KAFKA_CFG_"):]) == row.setting


@pytest.mark.parametrize("row", ROWS)
def test_every_spelling_gives_the_rows_setting(row: EnvVar) -> None:
    for name in row.spellings:
        props = settings_from_env({name: "1"})
        assert list(props) == [row.setting] and props[row.setting].origin == name


def test_the_tables_settings_are_not_passed_on_as_broker_config() -> None:
    s = build_settings({"KAFKA_CFG_LOG_ROLL_HOURS": "2", "KAFKA_CFG_BROKER_RACK": "r", "MOCKBROKER_PORT": "0",
                        "KAFKA_CFG_NODE_ID": "4", "KAFKA_CFG_NUM_PARTITIONS": "2"})
    assert s.config == {"log.roll.ms": str(2 * 3_600_000), "num.partitions": "2"}
    assert (s.rack, s.node_id, s.listeners[0].port) == ("r", 4, 0)
