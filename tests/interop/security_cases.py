"""The security matrix the interop tier runs every client through: SSL, mTLS, SASL_PLAINTEXT and SASL_SSL
with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512, each against a broker set up for it.

    @pytest.mark.parametrize("case", CASES, ids=str)
    def test_x(case, mockbroker_factory):
        setup = secured_broker(case, mockbroker_factory)
        ...setup.broker, setup.client_cert, setup.expected_principal
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mockbroker import MockBroker
from mockbroker.security.tls import ClientCert, TlsConfig

USER, PASSWORD = "alice", "secret"


@dataclass(frozen=True)
class Case:
    protocol: str  # SSL, SASL_PLAINTEXT, SASL_SSL
    mechanism: str | None = None  # the SASL mechanism
    mtls: bool = False  # SSL with ssl.client.auth=required and a client certificate

    def __str__(self) -> str:
        return "mTLS" if self.mtls else "-".join(x for x in (self.protocol, self.mechanism) if x)

    @property
    def tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    @property
    def sasl(self) -> bool:
        return self.mechanism is not None


MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
CASES = [Case("SSL"), Case("SSL", mtls=True)] + [
    Case(protocol, mechanism) for protocol in ("SASL_PLAINTEXT", "SASL_SSL") for mechanism in MECHANISMS
]
# A wrong password must fail with the client's authentication error (not a hang) for these.
WRONG_PASSWORD_CASES = [Case("SASL_PLAINTEXT", "PLAIN"), Case("SASL_SSL", "SCRAM-SHA-256"),
                        Case("SASL_SSL", "SCRAM-SHA-512")]


@dataclass
class Setup:
    broker: MockBroker
    client_cert: ClientCert | None
    expected_principal: str

    @property
    def ca_file(self) -> str | None:
        tls = self.broker.security.tls
        return tls.ca_file if tls is not None else None


def secured_broker(case: Case, factory: Callable[..., MockBroker], **kwargs: object) -> Setup:
    tls = TlsConfig(client_auth="required") if case.mtls else None
    broker = factory(security=case.protocol, users={USER: PASSWORD}, tls=tls,
                     config={"group.initial.rebalance.delay.ms": 0}, **kwargs)
    cert = broker.tls.client_cert(USER, organization="Acme") if case.mtls else None
    if case.sasl:
        principal = f"User:{USER}"
    elif cert is not None:
        principal = cert.principal
    else:
        principal = "User:ANONYMOUS"
    return Setup(broker, cert, principal)


def principals_of_produce(broker: MockBroker) -> set[str]:
    return {r.principal for r in broker.received(0)}
