"""Every command-line and environment error of `mockbroker` is one line on stderr naming the value given and
what is allowed, exit code 2, no traceback, no usage block (usage only with --help).

The bad values are made from the parser and the environment table themselves (IntRange/Choice/ExistingFile
argument types, the table's integer/choice parsers, the modelled broker settings of state/configs.py), so a
new flag, variable or setting is swept without editing this file; flags and variables whose values are free
text are listed with the reason. The sweep runs the real entry point in process (mockbroker.cli.main); a few
cases run as subprocesses to show that no traceback reaches stderr.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from types import FrameType

import pytest

from mockbroker import healthcheck
from mockbroker.cli import build_parser, main
from mockbroker.cliargs import Choice, ExistingFile, IntRange, NewFile
from mockbroker.control_http import ControlServer
from mockbroker.envconfig import ENVIRONMENT, env_to_setting
from mockbroker.envparsers import choice, integer
from mockbroker.server import MockBroker
from mockbroker.state.configs import BROKER_CONFIGS, ConfigType
from tests.docker.support import REPO, clean_env

MISSING_FILE = "/nonexistent-mockbroker/x.pem"

# Flags whose values are checked by their own parsers (bad values made by hand).
FLAG_BAD_VALUES: dict[str, list[str]] = {
    "--listener": ["nope", "PLAINTEXT://h:99999", "ODD://h:1"],
    "--advertised-listener": ["PLAINTEXT://0.0.0.0:9092", "PLAINTEXT://h:0"],
    "--topic": ["a:b", "bad/name", "a:0"],
    "--config": ["novalue", "num.partitions=0", "log.retention.ms=abc"],
    "--user": ["bob", ":secret"],
    "--security-protocol-map": ["A:B", "nocolon"],
    "--sasl-mechanisms": ["BOGUS"],
    "--data-dir": ["/proc/nonexistent-mockbroker/data"],
    "--advertised-host": ["0.0.0.0"],
}
# Flags that take any text: no value is wrong in itself.
FLAG_FREE_TEXT = {
    "--host": "any host name; one that cannot be bound is a bind error (exit 1, tested below)",
    "--http-host": "any host name, as --host",
    "--cluster-id": "any text (Kafka's storage tool wants a base64 UUID; the broker takes what it is given)",
    "--ssl-key-password": "any text; a wrong password is a TLS setting error when the key is read",
    "--ssl-keystore-password": "as --ssl-key-password",
    "--ssl-truststore-password": "as --ssl-key-password",
}
# Environment variables checked by their own parsers (bad values made by hand); each value alone.
ENV_BAD_VALUES: dict[str, list[str]] = {
    "KAFKA_PROCESS_ROLES": ["controller", "broker,janitor"],
    "KAFKA_LISTENERS": ["nope", "PLAINTEXT://h:99999", "ODD://h:1"],
    "KAFKA_ADVERTISED_LISTENERS": ["PLAINTEXT://0.0.0.0:9092"],
    "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": ["PLAINTEXT:NOPE", "nocolon"],
    "KAFKA_INTER_BROKER_LISTENER_NAME": ["NOPE"],
    "KAFKA_CREATE_TOPICS": ["a:b:1", "a:1:1:compact:extra"],
    "MOCKBROKER_TOPICS": ["a:b", "bad/name"],
    "KAFKA_CLIENT_USERS": ["alice"],  # no KAFKA_CLIENT_PASSWORDS
    "KAFKA_CLIENT_PASSWORDS": ["secret"],  # no KAFKA_CLIENT_USERS
    "MOCKBROKER_SSL_CA_OUT": ["/nonexistent-mockbroker/dir/ca.pem"],
    "KAFKA_LOG_DIRS": ["/proc/nonexistent-mockbroker/data"],
    "KAFKA_LOG_DIR": ["/proc/nonexistent-mockbroker/data"],
    "KAFKA_SSL_KEYSTORE_LOCATION": [MISSING_FILE],
    "KAFKA_SSL_TRUSTSTORE_LOCATION": [MISSING_FILE],
    "KAFKA_SASL_ENABLED_MECHANISMS": ["GSSAPI", "PLAIN,BOGUS"],
    "KAFKA_OPTS": ["-Djava.security.auth.login.config=/nonexistent-mockbroker/jaas.conf", "-Dx='unclosed"],
    "MOCKBROKER_SCRAM_CREDENTIALS": ["SCRAM-SHA-1=[name=a,password=b]", "alice:secret",
                                     "SCRAM-SHA-256=[name=a,password=b,iterations=10]"],
    "KAFKA_SASL_JAAS_CONFIG": ["org.apache.kafka.common.security.plain.PlainLoginModule requird;",
                               "com.sun.security.auth.module.Krb5LoginModule required;"],
    "KAFKA_LISTENER_NAME_SASL__PLAINTEXT_PLAIN_SASL_JAAS_CONFIG": [
        "org.apache.kafka.common.security.scram.ScramLoginModule required;"],
    "SCHEMA_REGISTRY_LISTENERS": ["nope", "ftp://0.0.0.0:8081", "http://h:99999", "http://a:1,http://b:2"],
    "SCHEMA_REGISTRY_SCHEMA_COMPATIBILITY_LEVEL": ["sideways"],
    "SCHEMA_REGISTRY_AVRO_COMPATIBILITY_LEVEL": ["sideways"],
    "SCHEMA_REGISTRY_MODE_MUTABILITY": ["maybe"],
    "SCHEMA_REGISTRY_KAFKASTORE_TOPIC": ["_other_schemas"],
}
# JAAS values are not echoed whole (they hold passwords): the message names the part at fault.
SHOWN_PART = {
    "org.apache.kafka.common.security.plain.PlainLoginModule requird;": "unknown control flag 'requird'",
    "com.sun.security.auth.module.Krb5LoginModule required;": "com.sun.security.auth.module.Krb5LoginModule",
    "org.apache.kafka.common.security.scram.ScramLoginModule required;":
        "not org.apache.kafka.common.security.scram.ScramLoginModule",
    "-Djava.security.auth.login.config=/nonexistent-mockbroker/jaas.conf": "'/nonexistent-mockbroker/jaas.conf'",
}
ENV_FREE_TEXT = {
    "CLUSTER_ID": "any text, as --cluster-id", "KAFKA_CLUSTER_ID": "as CLUSTER_ID",
    "KAFKA_BROKER_RACK": "any rack name",
    "KAFKA_CONTROLLER_LISTENER_NAMES": "names; an unknown one names no listener, as in Kafka",
    "KAFKA_SECURITY_INTER_BROKER_PROTOCOL": "accepted, no effect on one node",
    "KAFKA_CONTROLLER_QUORUM_VOTERS": "accepted, no effect: no KRaft quorum",
    "KAFKA_CONTROLLER_QUORUM_BOOTSTRAP_SERVERS": "as KAFKA_CONTROLLER_QUORUM_VOTERS",
    "KAFKA_HOST_NAME": "any host name, as --host", "KAFKA_ADVERTISED_HOST_NAME": "any host name",
    "KAFKA_CREATE_TOPICS_SEPARATOR": "any separator",
    "MOCKBROKER_HOST": "as --host", "MOCKBROKER_HTTP_HOST": "as --http-host",
    "SCHEMA_REGISTRY_HOST_NAME": "accepted, no effect: the registry is in the broker's process",
    "SCHEMA_REGISTRY_KAFKASTORE_BOOTSTRAP_SERVERS": "accepted, no effect: the registry's store is the broker itself",
}


def int_bad_values(lo: int | None, hi: int | None) -> list[str]:
    return ["abc", *([str(lo - 1)] if lo is not None else []), *([str(hi + 1)] if hi is not None else [])]


def flag_cases() -> Iterator[tuple[str, str]]:
    for action in build_parser()._actions:
        if not action.option_strings or action.nargs == 0:
            continue  # --help, store_true flags
        flag, kind = action.option_strings[0], action.type
        if isinstance(kind, IntRange):
            values = int_bad_values(kind.lo, kind.hi)
        elif isinstance(kind, Choice):
            values = ["bogus"]
        elif isinstance(kind, ExistingFile):
            values = [MISSING_FILE]
        elif isinstance(kind, NewFile):
            values = ["/nonexistent-mockbroker/dir/ca.pem"]
        else:
            assert flag in FLAG_BAD_VALUES or flag in FLAG_FREE_TEXT, f"{flag}: give it bad values or a reason"
            values = FLAG_BAD_VALUES.get(flag, [])
        for value in values:
            yield flag, value


def setting_variable(name: str) -> str:
    """KAFKA_CFG_<NAME> of a Kafka setting (the inverse of envconfig.env_to_setting)."""
    suffix = name.replace("_", "__").replace("-", "___").replace(".", "_").upper()
    assert env_to_setting(suffix) == name
    return "KAFKA_CFG_" + suffix


def env_cases() -> Iterator[tuple[str, str]]:
    for row in ENVIRONMENT:
        if isinstance(row.parse, integer):
            values = int_bad_values(row.parse.lo, row.parse.hi)
        elif isinstance(row.parse, choice):
            values = ["bogus"]
        else:
            assert row.kafka in ENV_BAD_VALUES or row.kafka in ENV_FREE_TEXT, f"{row.kafka}: bad values or a reason"
            values = ENV_BAD_VALUES.get(row.kafka, [])
        for var in row.spellings:
            for value in values:
                yield var, value
    for var, values in ENV_BAD_VALUES.items():
        if not any(var in row.spellings for row in ENVIRONMENT):
            for value in values:
                yield var, value
    # Every broker setting mockbroker models, through the spelling rule.
    for name, d in sorted(BROKER_CONFIGS.items()):
        if d.type in (ConfigType.INT, ConfigType.SHORT, ConfigType.LONG):
            values = ["abc", "99999999999999999999", *([str(d.minimum - 1)] if d.minimum is not None else [])]
        elif d.type == ConfigType.BOOLEAN:
            values = ["maybe"]
        elif d.type == ConfigType.DOUBLE:
            values = ["abc"]
        elif d.choices:
            values = ["bogus"]
        else:
            continue  # free text
        for value in values:
            yield setting_variable(name), value


class Hung(Exception):
    pass


@pytest.fixture
def no_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """No KAFKA_* / MOCKBROKER_* / CLUSTER_ID in the environment; a case that starts a broker instead of
    failing is stopped by an alarm (and fails)."""
    for var in list(os.environ):
        if var.startswith(("KAFKA_", "MOCKBROKER_")) or var == "CLUSTER_ID":
            monkeypatch.delenv(var)

    def alarm(signum: int, frame: FrameType | None) -> None:
        raise Hung("the command started instead of failing")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(20)
    try:
        yield monkeypatch
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def run_main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    try:
        code = main(argv)
    except SystemExit as exc:
        code = int(exc.code) if isinstance(exc.code, int) else 1
    return code, capsys.readouterr().err


def assert_one_line_error(code: int, err: str, value: str) -> None:
    lines = err.strip("\n").split("\n")
    assert code == 2, err
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert repr(value) in lines[0] or value in lines[0], lines[0]
    assert lines[0].startswith("mockbroker"), lines[0]


@pytest.mark.parametrize(("flag", "value"), list(flag_cases()))
def test_bad_flag_value_is_one_line_exit_2(flag: str, value: str, no_env: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_main([f"{flag}={value}"], capsys)
    key, sep, setting_value = value.partition("=")
    if flag == "--config" and sep:  # named as `--config KEY='VALUE'`
        assert_one_line_error(code, err, setting_value)
        assert key in err, err
    else:
        assert_one_line_error(code, err, value)
    if flag != "--config":  # --config's errors name the setting (log.retention.ms), not the flag
        assert flag in err or flag.lstrip("-").replace("-", ".") in err, err


@pytest.mark.parametrize(("var", "value"), list(env_cases()))
def test_bad_environment_value_is_one_line_exit_2(var: str, value: str, no_env: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    no_env.setenv(var, value)
    code, err = run_main([], capsys)
    assert_one_line_error(code, err, SHOWN_PART.get(value, value.strip()))
    assert var in err, err


def test_argument_errors_print_no_usage(no_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_main(["--bogus"], capsys)
    assert (code, err) == (2, "mockbroker: error: unrecognized arguments: --bogus (see mockbroker --help)\n")
    code, err = run_main(["--port"], capsys)
    assert (code, err) == (2, "mockbroker: error: argument --port: expected one argument (see mockbroker --help)\n")


def test_help_prints_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.startswith("usage: mockbroker")


def test_brokers_past_the_last_port_name_the_ports(no_env: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_main(["--brokers", "3", "--port", "65534"], capsys)
    assert code == 2
    assert err == ("mockbroker: --brokers=3: listener PLAINTEXT's port 65534 leaves no room for 3 nodes "
                   "(ports 65534..65536; the most is 65535)\n")


def test_partitions_below_one_are_refused_by_flag_and_by_environment(
        no_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--partitions", "0"], ["--partitions", "-3"]):
        code, err = run_main(argv, capsys)
        assert code == 2 and "must be 1..2147483647" in err, err
    no_env.setenv("KAFKA_CFG_NUM_PARTITIONS", "0")
    code, err = run_main([], capsys)
    assert (code, err) == (2, "mockbroker: KAFKA_CFG_NUM_PARTITIONS='0': Invalid value 0 for configuration "
                              "num.partitions: Value must be at least 1\n")


def test_second_node_that_cannot_bind_is_the_one_named(no_env: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    # Node 2's port is held here; node 1's (the port before) is free when checked, but another process could
    # take it before the command binds: then node 1 is (rightly) the one named, and the test tries other ports.
    for _ in range(10):
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            with socket.socket() as probe:
                try:
                    probe.bind(("127.0.0.1", port - 1))
                except OSError:
                    continue
            code, err = run_main(["--brokers", "2", "--port", str(port - 1)], capsys)
        assert code == 1
        assert err.count("\n") == 1 and "Traceback" not in err
        if "(node 1)" in err:
            continue
        assert f"127.0.0.1:{port} (node 2)" in err, err
        assert set(re.findall(r":(\d+)", err)) == {str(port)}, err  # only the port that failed
        return
    pytest.fail("no pair of free ports in 10 tries")


# -- the healthcheck subcommand


@pytest.mark.parametrize(("argv", "value"), [
    (["--timeout", "abc"], "abc"), (["--timeout", "-1"], "-1"), (["--timeout", "0"], "0"),
    (["--bootstrap", "nohost"], "nohost"), (["--bootstrap", "h:99999"], "h:99999"), (["--bogus"], "--bogus"),
])
def test_healthcheck_argument_errors_are_one_line_exit_2(argv: list[str], value: str,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_main(["healthcheck", *argv], capsys)
    assert code == 2, err
    assert err.count("\n") == 1 and value in err and err.endswith("(see mockbroker healthcheck --help)\n"), err


def test_healthcheck_says_the_control_endpoint_is_http_not_kafka() -> None:
    with MockBroker(port=0).run_in_thread() as broker:
        assert broker._loop is not None
        control = asyncio.run_coroutine_threadsafe(ControlServer(broker).start("127.0.0.1", 0), broker._loop).result(10)
        try:
            reason = healthcheck.check("127.0.0.1", int(control.url.rsplit(":", 1)[1]), timeout=10)
        finally:
            asyncio.run_coroutine_threadsafe(control.stop(), broker._loop).result(10)
    assert reason is not None and reason.startswith("the port answered HTTP, not Kafka"), reason


# -- as subprocesses: nothing but the one line reaches stderr


@pytest.mark.parametrize(("argv", "env", "value"), [
    (["--brokers", "3", "--port", "65534"], {}, "65534"),
    (["--partitions", "-3"], {}, "-3"),
    (["--port", "0"], {"KAFKA_CFG_NUM_PARTITIONS": "0"}, "0"),
    (["--listener", "SSL://127.0.0.1:0", "--ssl-certfile", MISSING_FILE], {}, MISSING_FILE),
    (["--port", "x"], {}, "x"),
    (["healthcheck", "--timeout", "never"], {}, "never"),
])
def test_errors_reach_stderr_as_one_line_without_traceback(argv: list[str], env: dict[str, str], value: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "mockbroker", *argv], cwd=REPO, env=clean_env(env),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and value in proc.stderr and "Traceback" not in proc.stderr, proc.stderr

