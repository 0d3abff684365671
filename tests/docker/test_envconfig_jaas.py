"""SASL users from the Kafka images' JAAS variables (envconfig -> the broker's settings -> its credentials):
KAFKA_LISTENER_NAME_<LISTENER>_<MECH>_SASL_JAAS_CONFIG, KAFKA_SASL_JAAS_CONFIG, a JAAS file through
KAFKA_OPTS=-Djava.security.auth.login.config=..., SCRAM credentials through MOCKBROKER_SCRAM_CREDENTIALS;
one warning for a SASL listener with no user; unknown JAAS options listed with the unknown settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from mockbroker.envconfig import ConfigError, build_settings
from mockbroker.server import MockBroker

PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
SASL_ENV = {
    "KAFKA_LISTENERS": "SASL_PLAINTEXT://127.0.0.1:0",
    "KAFKA_SASL_ENABLED_MECHANISMS": "PLAIN,SCRAM-SHA-256",
}


def broker_of(env: dict[str, str]) -> MockBroker:
    return MockBroker(**build_settings(env).broker_kwargs())


def test_listener_jaas_variables_give_plain_users_and_scram_credentials() -> None:
    env = SASL_ENV | {
        "KAFKA_LISTENER_NAME_SASL__PLAINTEXT_PLAIN_SASL_JAAS_CONFIG":
            f'{PLAIN} required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";',
        "KAFKA_LISTENER_NAME_SASL__PLAINTEXT_SCRAM___SHA___256_SASL_JAAS_CONFIG":
            f'{SCRAM} required username="admin" password="admin-secret";',
        "MOCKBROKER_SCRAM_CREDENTIALS": "SCRAM-SHA-256=[name=bob,password=bob-secret]",
    }
    s = build_settings(env)
    assert s.config["listener.name.sasl_plaintext.plain.sasl.jaas.config"].startswith(PLAIN)
    assert s.config["mockbroker.scram.credentials"] == "SCRAM-SHA-256=[name=bob,password=bob-secret]"
    assert s.unknown == {} and s.warnings == []
    credentials = broker_of(env).security.credentials
    assert credentials.check_plain("alice", "alice-secret") and credentials.check_plain("admin", "admin-secret")
    assert credentials.scram_users() == ["bob"]  # ScramLoginModule's username is the broker's own login only


def test_broker_wide_sasl_jaas_config() -> None:
    env = SASL_ENV | {"KAFKA_SASL_JAAS_CONFIG": f'{PLAIN} required user_carol="carol-secret";'}
    s = build_settings(env)
    assert s.ignored == {} and s.unknown == {}  # read, not an "ignored" sasl.* setting
    assert broker_of(env).security.credentials.check_plain("carol", "carol-secret")


def test_jaas_file_through_kafka_opts(tmp_path: Path) -> None:
    jaas = tmp_path / "kafka_server_jaas.conf"
    jaas.write_text(f"""KafkaServer {{
    {PLAIN} required username="admin" password="admin-secret" user_admin="admin-secret" user_dave="dave-secret";
}};
""")
    env = SASL_ENV | {"KAFKA_OPTS": f"-Xms256m -Djava.security.auth.login.config={jaas} -Dfoo=bar"}
    s = build_settings(env)
    assert s.config["java.security.auth.login.config"] == str(jaas)
    assert s.origins["java.security.auth.login.config"] == "KAFKA_OPTS -Djava.security.auth.login.config"
    assert broker_of(env).security.credentials.check_plain("dave", "dave-secret")


def test_kafka_opts_without_a_jaas_file_is_ignored() -> None:
    s = build_settings({"KAFKA_OPTS": "-Xmx1g -Dlog4j.configuration=file:/x"})
    assert "java.security.auth.login.config" not in s.config and s.unknown == {} and s.warnings == []


def test_a_sasl_listener_with_no_user_is_one_warning() -> None:
    s = build_settings({"KAFKA_LISTENERS": "PLAINTEXT://:9092,SASL_PLAINTEXT://:9093,SASL_SSL://:9094"})
    assert s.warnings == [
        "SASL listener SASL_PLAINTEXT (SASL_PLAINTEXT), SASL_SSL (SASL_SSL) has no user: no client can log in (give "
        'KAFKA_CLIENT_USERS and KAFKA_CLIENT_PASSWORDS, a JAAS config with user_<name>="<password>", or '
        "MOCKBROKER_SCRAM_CREDENTIALS)"]
    for users in ({"KAFKA_CLIENT_USERS": "a", "KAFKA_CLIENT_PASSWORDS": "b"},
                  {"MOCKBROKER_SCRAM_CREDENTIALS": "SCRAM-SHA-512=[name=a,password=b]"},
                  {"KAFKA_SASL_JAAS_CONFIG": f'{PLAIN} required user_a="b";'},
                  {"KAFKA_SASL_ENABLED_MECHANISMS": "OAUTHBEARER"}):
        assert build_settings({"KAFKA_LISTENERS": "SASL_PLAINTEXT://:9093"} | users).warnings == [], users


def test_unknown_jaas_options_are_listed_once_with_the_unknown_settings() -> None:
    s = build_settings(SASL_ENV | {"KAFKA_SASL_JAAS_CONFIG": f'{PLAIN} required user_a="b" debug="true";',
                                   "KAFKA_NOT_A_SETTING": "1"})
    assert s.unknown_line() == ("settings not known to mockbroker (kept, no effect): PlainLoginModule option debug "
                                "(KAFKA_SASL_JAAS_CONFIG), not.a.setting (KAFKA_NOT_A_SETTING)")


@pytest.mark.parametrize(("env", "message"), [
    ({"KAFKA_SASL_JAAS_CONFIG": f"{PLAIN} requird;"},
     f"KAFKA_SASL_JAAS_CONFIG (sasl.jaas.config): login module {PLAIN} (line 1): unknown control flag 'requird'"),
    ({"KAFKA_OPTS": "-Djava.security.auth.login.config=/nonexistent/jaas.conf"},
     "KAFKA_OPTS -Djava.security.auth.login.config: cannot read the JAAS file '/nonexistent/jaas.conf'"),
    ({"MOCKBROKER_SCRAM_CREDENTIALS": "SCRAM-SHA-256=[name=a]"},
     "MOCKBROKER_SCRAM_CREDENTIALS: 'SCRAM-SHA-256=[name=a]': name and password are both needed"),
])
def test_bad_jaas_variables_are_one_message_naming_the_variable(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as exc:
        build_settings(env)
    assert str(exc.value).startswith(message), str(exc.value)


def test_describe_configs_hides_jaas_values() -> None:
    from mockbroker.state.configs import describe_broker_entries

    broker = broker_of(SASL_ENV | {"KAFKA_SASL_JAAS_CONFIG": f'{PLAIN} required user_a="secret";',
                                   "MOCKBROKER_SCRAM_CREDENTIALS": "SCRAM-SHA-256=[name=b,password=secret]"})
    entries = {e.name: e for e in describe_broker_entries(broker.cluster.config, per_broker=True)}
    for name in ("sasl.jaas.config", "mockbroker.scram.credentials"):
        assert (entries[name].value, entries[name].is_sensitive) == (None, True)
