"""The ACL set-up the interop tier runs every client against: a SASL_PLAINTEXT broker with Kafka's
authorizer on, a super user (admin) and an ACL-limited user (alice) who may write and read topic
"allowed", join group "allowed-group" and use transactional id "tx-allowed", and nothing else
("forbidden", "forbidden-group", "tx-forbidden")."""

from __future__ import annotations

from collections.abc import Callable

from mockbroker import MockBroker

USER, PASSWORD = "alice", "secret"
ADMIN, ADMIN_PASSWORD = "admin", "admin-secret"
ALLOWED, FORBIDDEN = "allowed", "forbidden"
ALLOWED_GROUP, FORBIDDEN_GROUP = "allowed-group", "forbidden-group"
ALLOWED_TXN, FORBIDDEN_TXN = "tx-allowed", "tx-forbidden"


def acl_broker(factory: Callable[..., MockBroker], **kwargs: object) -> MockBroker:
    broker = factory(security="SASL_PLAINTEXT", users={USER: PASSWORD, ADMIN: ADMIN_PASSWORD},
                     super_users=[f"User:{ADMIN}"], config={"group.initial.rebalance.delay.ms": 0}, **kwargs)
    broker.create_topic(ALLOWED)
    broker.create_topic(FORBIDDEN)
    principal = f"User:{USER}"
    broker.add_acl(principal, ["READ", "WRITE"], topic=ALLOWED)
    broker.add_acl(principal, "READ", group=ALLOWED_GROUP)
    broker.add_acl(principal, "WRITE", transactional_id=ALLOWED_TXN)
    return broker
