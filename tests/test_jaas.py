"""JAAS text (mockbroker/security/jaas.py) and what the broker takes from it (security/settings.py): the
sasl.jaas.config form and the file form, good and malformed (one clean message naming the problem), PLAIN users
from PlainLoginModule, ScramLoginModule as the broker's own login only, OAuthBearerLoginModule's unsecured
validator options, and SCRAM credentials in kafka-storage format's --add-scram form."""

from __future__ import annotations

from pathlib import Path

import pytest

from mockbroker.security.jaas import JaasError, LoginModule, parse_jaas_config, parse_jaas_file
from mockbroker.security.oauth import OAuthConfig
from mockbroker.security.settings import parse_scram_credentials, sasl_logins, security_from_settings
from mockbroker.settings import make_settings
from mockbroker.state.cluster.cluster import Listener

PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
OAUTH = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
PLAIN_CONFIG = f'{PLAIN} required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";'


def test_sasl_jaas_config_reads_class_flag_and_options() -> None:
    assert parse_jaas_config(PLAIN_CONFIG) == [LoginModule(PLAIN, "required", {
        "username": "admin", "password": "admin-secret", "user_admin": "admin-secret", "user_alice": "alice-secret"})]


def test_values_may_be_unquoted_single_quoted_escaped_and_span_lines_with_comments() -> None:
    text = f"""{SCRAM}   REQUIRED  // the broker's own login
        username=admin /* a comment */ password='pa ss"word'
        tokenauth="a\\"b\\\\c";"""
    assert parse_jaas_config(text) == [LoginModule(SCRAM, "required", {
        "username": "admin", "password": 'pa ss"word', "tokenauth": 'a"b\\c'})]


def test_several_modules_in_one_config() -> None:
    modules = parse_jaas_config(f"{PLAIN} sufficient; {SCRAM} optional username=x password=y;")
    assert [(m.short_name, m.flag) for m in modules] == [("PlainLoginModule", "sufficient"), ("ScramLoginModule", "optional")]


@pytest.mark.parametrize(("text", "message"), [
    ("", "no login module"),
    ("// only a comment", "no login module"),
    (f"{PLAIN};", f"login module {PLAIN} (line 1): missing its control flag"),
    (f"{PLAIN} requird;", "unknown control flag 'requird' (one of required, requisite, sufficient, optional)"),
    (f'{PLAIN} required user_alice="x"', "missing ';' at its end"),
    (f"{PLAIN} required user_alice=;", "option user_alice has no value (found ';')"),
    (f"{PLAIN} required user_alice;", "option user_alice has no '=value'"),
    (f'{PLAIN} required user_alice="x;', "line 1: a quoted string is not closed (missing \")"),
    (f"{PLAIN} required /* open", "line 1: a /* comment is not closed"),
    (f'{PLAIN} required user_a="x" user_a="y";', "option user_a is given twice"),
    ('"quoted.Class" required;', 'expected a login module class name, found "quoted.Class"'),
    (f"{PLAIN} required = x;", "expected an option name=value or ';', found '='"),
])
def test_malformed_config_is_one_message_naming_the_problem(text: str, message: str) -> None:
    with pytest.raises(JaasError) as exc:
        parse_jaas_config(text)
    assert message in str(exc.value)
    assert "\n" not in str(exc.value)


def test_file_sections_by_name() -> None:
    text = f"""
    KafkaServer {{
        {PLAIN} required user_alice="alice-secret";
        {SCRAM} required username="admin" password="admin-secret";
    }};
    sasl_plaintext.KafkaServer {{ {PLAIN} required user_bob="bob-secret"; }};
    Client {{ org.example.ZkLogin required; }};
    """
    sections = parse_jaas_file(text)
    assert list(sections) == ["KafkaServer", "sasl_plaintext.KafkaServer", "Client"]
    assert [m.short_name for m in sections["KafkaServer"]] == ["PlainLoginModule", "ScramLoginModule"]


@pytest.mark.parametrize(("text", "message"), [
    ("", "no section"),
    (f"KafkaServer {{ {PLAIN} required; }}", "section KafkaServer (line 1): missing ';' after its '}'"),
    (f"KafkaServer {{ {PLAIN} required;", "section KafkaServer (line 1): missing '}' at its end"),
    (f"KafkaServer {PLAIN} required; }};", "expected '{' after section KafkaServer"),
    ("KafkaServer { }; KafkaServer { };", "section KafkaServer appears twice"),
    ("\n\nKafkaServer {\n  x.Y requird;\n};", "login module x.Y (line 4): unknown control flag 'requird'"),
])
def test_malformed_file_is_one_message_naming_the_problem(text: str, message: str) -> None:
    with pytest.raises(JaasError) as exc:
        parse_jaas_file(text)
    assert message in str(exc.value)


def test_plain_users_come_from_user_options_and_scram_module_gives_no_user() -> None:
    logins = sasl_logins({
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_CONFIG,
        "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config": f'{SCRAM} required username="admin" password="x";',
    })
    assert logins.plain_users == {"admin": "admin-secret", "alice": "alice-secret"}
    assert logins.scram == [] and logins.unknown == {} and logins.modules == 2


def test_listener_names_spelled_with_dots_and_mechanisms_with_dots_are_read() -> None:
    # KAFKA_LISTENER_NAME_SASL_PLAINTEXT_SCRAM_SHA_256_SASL_JAAS_CONFIG, written without Confluent's __ / ___
    logins = sasl_logins({"listener.name.sasl.plaintext.scram.sha.256.sasl.jaas.config": f"{SCRAM} required;"})
    assert logins.modules == 1


def test_options_no_module_takes_are_listed_as_unknown() -> None:
    logins = sasl_logins({"sasl.jaas.config": f'{PLAIN} required user_a="x" serviceName="kafka";'})
    assert logins.unknown == {"PlainLoginModule option serviceName": "sasl.jaas.config"}


@pytest.mark.parametrize(("settings", "message"), [
    ({"sasl.jaas.config": f"{PLAIN} required; {PLAIN} required;"}, "2 login modules; Kafka takes exactly 1 here"),
    ({"listener.name.x.plain.sasl.jaas.config": f"{SCRAM} required;"},
     "the PLAIN mechanism logs in with PlainLoginModule, not " + SCRAM),
    ({"listener.name.x.gssapi.sasl.jaas.config": f"{PLAIN} required;"}, "no SASL mechanism served here"),
    ({"sasl.jaas.config": "com.sun.security.auth.module.Krb5LoginModule required;"},
     "login module com.sun.security.auth.module.Krb5LoginModule is not served here"),
    ({"sasl.jaas.config": f'{PLAIN} required user_a="x";', "listener.name.l.plain.sasl.jaas.config":
      f'{PLAIN} required user_a="y";'}, "user a has two different PLAIN passwords"),
    ({"sasl.jaas.config": f'{OAUTH} required unsecuredValidatorAllowableClockSkewMs="soon";'},
     "unsecuredValidatorAllowableClockSkewMs='soon' is not a whole number of ms"),
])
def test_jaas_settings_that_cannot_work_name_the_setting(settings: dict[str, str], message: str) -> None:
    with pytest.raises(JaasError) as exc:
        sasl_logins(settings)
    assert message in str(exc.value)
    assert exc.value.key in settings


def test_jaas_file_kafkaserver_sections_give_users(tmp_path: Path) -> None:
    path = tmp_path / "jaas.conf"
    path.write_text(f"""KafkaServer {{ {PLAIN} required user_alice="alice-secret"; }};
sasl_ssl.KafkaServer {{ {PLAIN} required user_bob="bob-secret"; }};
Client {{ org.example.Other required; }};""")
    logins = sasl_logins({"java.security.auth.login.config": str(path)})
    assert logins.plain_users == {"alice": "alice-secret", "bob": "bob-secret"}
    path.write_text("Client { org.example.Other required; };")
    with pytest.raises(JaasError, match="has no KafkaServer section"):
        sasl_logins({"java.security.auth.login.config": str(path)})
    path.write_text("KafkaServer {")
    with pytest.raises(JaasError, match=r"JAAS file '.*jaas.conf': section KafkaServer \(line 1\): missing '}'"):
        sasl_logins({"java.security.auth.login.config": str(path)})


def test_oauthbearer_module_configures_the_unsecured_validator() -> None:
    listeners = [Listener("SASL_PLAINTEXT", 1, "127.0.0.1", 0, None, None, "SASL_PLAINTEXT")]
    security = security_from_settings(make_settings(listeners=listeners, config={"sasl.jaas.config": (
        f'{OAUTH} required unsecuredLoginStringClaim_sub="admin" unsecuredValidatorPrincipalClaimName="client_id" '
        'unsecuredValidatorRequiredScope="read write" unsecuredValidatorAllowableClockSkewMs="2000";')}))
    assert security.oauth == OAuthConfig(principal_claim="client_id", required_scopes=["read", "write"],
                                          allowable_clock_skew_ms=2000)
    assert "OAUTHBEARER" in security.mechanisms


def test_users_reach_the_broker_for_their_mechanism_only() -> None:
    listeners = [Listener("SASL_PLAINTEXT", 1, "127.0.0.1", 0, None, None, "SASL_PLAINTEXT")]
    security = security_from_settings(make_settings(listeners=listeners, config={
        "sasl.jaas.config": f'{PLAIN} required user_alice="alice-secret";',
        "mockbroker.scram.credentials": "SCRAM-SHA-256=[name=bob,password=bob-secret]"}))
    assert security.credentials.check_plain("alice", "alice-secret")
    assert security.credentials.scram_credential("alice", "SCRAM-SHA-256") is None
    assert security.credentials.scram_credential("bob", "SCRAM-SHA-256") is not None
    assert security.credentials.scram_credential("bob", "SCRAM-SHA-512") is None
    assert not security.credentials.check_plain("bob", "bob-secret")


def test_add_scram_form() -> None:
    assert parse_scram_credentials(
        "SCRAM-SHA-256=[name=alice,password=secret] ; SCRAM-SHA-512=[name=\"bob\",password=\"p w\",iterations=8192]"
    ) == [("SCRAM-SHA-256", "alice", "secret", None), ("SCRAM-SHA-512", "bob", "p w", 8192)]


@pytest.mark.parametrize(("text", "message"), [
    ("alice:secret", "'alice:secret' is not MECHANISM=[name=NAME,password=PASSWORD]"),
    ("SCRAM-SHA-1=[name=a,password=b]", "unknown SCRAM mechanism SCRAM-SHA-1"),
    ("SCRAM-SHA-256=[name=a]", "name and password are both needed"),
    ("SCRAM-SHA-256=[name=a,password=b,salt=c]", "unsupported salt"),
    ("SCRAM-SHA-256=[name=a,password=b,iterations=100]", "iterations must be 4096..16384"),
    ("SCRAM-SHA-256=[name=a,password]", "'password' is not key=value"),
    ("   ", "no credential"),
])
def test_bad_add_scram_form_names_the_problem(text: str, message: str) -> None:
    with pytest.raises(JaasError) as exc:
        parse_scram_credentials(text)
    assert message in str(exc.value)
