"""The environment table (mockbroker.envconfig.ENVIRONMENT) is consistent data: each spelling names its
row's setting by the images' own rule, no variable is listed twice, and every spelling is read."""

from __future__ import annotations

import re

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


def documented_variables() -> str:
    """The first column of docker/README.md's environment table (docs/docker.md includes it)."""
    from tests.docker.support import DOCKER

    text = (DOCKER / "README.md").read_text()
    table = text.split("### Environment variables", 1)[1].split("\n### ", 1)[0]
    return "\n".join(line.split(" | ")[0] for line in table.splitlines() if line.startswith("| `"))


@pytest.mark.parametrize("row", ROWS)
def test_the_docs_environment_table_names_every_variable_read(row: EnvVar) -> None:
    """Each variable of ENVIRONMENT is in the table by name; bitnami's KAFKA_CFG_<X> spellings are covered
    by the table's KAFKA_CFG_<SETTING> row (the rule the test above holds them to)."""
    names = [row.kafka] + ([row.bitnami] if row.bitnami and not row.bitnami.startswith("KAFKA_CFG_") else [])
    documented = documented_variables()
    for name in names:
        assert re.search(rf"`{name}`|{name}\b", documented), f"{name} is read but not in docker/README.md's table"


def test_every_mockbroker_variable_in_the_docs_table_is_read() -> None:
    read = {name for row in ENVIRONMENT for name in row.spellings}
    named = set(re.findall(r"\bMOCKBROKER_[A-Z_]+[A-Z]\b", documented_variables()))
    assert named and named <= read, named - read
