"""kcat (librdkafka) against Kafka's authorizer, as a SASL user limited by ACLs (acl_cases): producing to or
consuming from a forbidden topic, and consuming in a forbidden group, fail with kcat's authorization error
and a nonzero exit; the allowed topic and group work; `-L` lists only the topics the user may describe.

kcat does no transactions, so the transactional id is left to the other clients (test_acls_*.py).
Re-authentication is not run with kcat: Debian 12's kcat has librdkafka 2.0.2, older than librdkafka's
KIP-368 support (2.2.0); confluent-kafka's newer librdkafka is run in test_acls_confluent.py."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mockbroker import MockBroker
from tests.interop.acl_cases import (
    ALLOWED,
    ALLOWED_GROUP,
    FORBIDDEN,
    FORBIDDEN_GROUP,
    PASSWORD,
    USER,
    acl_broker,
)
from tests.interop.clients import run_kcat

pytestmark = pytest.mark.interop
TIMEOUT = 60


def kcat_options(broker: MockBroker) -> list[str]:
    return ["-b", broker.bootstrap_servers, "-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanism=PLAIN",
            "-X", f"sasl.username={USER}", "-X", f"sasl.password={PASSWORD}", "-X", "message.timeout.ms=20000"]


def test_kcat_acl_limited_user_gets_topic_authorization_errors(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = acl_broker(mockbroker_factory)
    options = kcat_options(broker)

    out = run_kcat([*options, "-P", "-t", FORBIDDEN, "-p", "0"], input="refused\n", timeout=TIMEOUT, check=False)
    assert out.returncode != 0
    assert b"Delivery failed" in out.stderr and b"Topic authorization failed" in out.stderr, out.stderr
    assert broker.records(FORBIDDEN) == []
    run_kcat([*options, "-P", "-t", ALLOWED, "-p", "0"], input="one\ntwo\n", timeout=TIMEOUT)
    assert [r.value for r in broker.records(ALLOWED)] == [b"one", b"two"]
    assert {r.principal for r in broker.received(0)} == {f"User:{USER}"}  # 0 = Produce

    out = run_kcat([*options, "-C", "-t", FORBIDDEN, "-p", "0", "-o", "beginning", "-e"], timeout=TIMEOUT,
                   check=False)
    assert out.returncode != 0
    assert b"Topic authorization failed" in out.stderr, out.stderr
    out = run_kcat([*options, "-C", "-t", ALLOWED, "-p", "0", "-o", "beginning", "-e", "-q"], timeout=TIMEOUT)
    assert out.stdout.split() == [b"one", b"two"]

    # Metadata for all topics leaves out the forbidden one; naming it gets the error.
    listing = run_kcat([*options, "-L"], timeout=TIMEOUT).stdout.decode()
    assert f'topic "{ALLOWED}"' in listing and f'topic "{FORBIDDEN}"' not in listing, listing
    named = run_kcat([*options, "-L", "-t", FORBIDDEN], timeout=TIMEOUT).stdout.decode()
    assert f'topic "{FORBIDDEN}" with 0 partitions: Broker: Topic authorization failed' in named, named


def test_kcat_acl_limited_user_gets_group_authorization_errors(
        mockbroker_factory: Callable[..., MockBroker]) -> None:
    broker = acl_broker(mockbroker_factory)
    options = kcat_options(broker)
    run_kcat([*options, "-P", "-t", ALLOWED, "-p", "0"], input="v\n", timeout=TIMEOUT)

    out = run_kcat([*options, "-G", FORBIDDEN_GROUP, ALLOWED, "-o", "beginning", "-e"], timeout=TIMEOUT,
                   check=False)
    assert out.returncode != 0
    assert b"Group authorization failed" in out.stderr, out.stderr
    assert broker.committed(FORBIDDEN_GROUP) == {}

    out = run_kcat([*options, "-G", ALLOWED_GROUP, ALLOWED, "-o", "beginning", "-e", "-q"], timeout=TIMEOUT)
    assert out.stdout.split() == [b"v"]
    assert broker.committed(ALLOWED_GROUP) == {(ALLOWED, 0): 1}
