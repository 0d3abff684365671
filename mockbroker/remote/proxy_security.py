"""The fault proxy's security (mockbroker/remote/proxy.py): TLS on both sides, SASL left to the clients.

- To the cluster: the proxy opens each upstream connection as the user's client settings say (librdkafka's
  or Java's property names, read by mockbroker/remote/security.py): TLS with their CA, client certificate
  (mutual TLS) and host name check for SSL and SASL_SSL, plain TCP otherwise.
- To the clients: by default the proxy offers what the cluster does: TLS when the cluster's protocol has
  it, with a server certificate for 127.0.0.1 and localhost from mockbroker's throwaway CA
  (mockbroker/security/tls.py); `tls=TlsConfig(certfile=..., keyfile=...)` gives it a certificate of the
  user's own, `tls=False` makes it plaintext to the clients whatever the cluster speaks.
- SASL is never done by the proxy for its clients: each client's SaslHandshake and SaslAuthenticate pass to
  the cluster on that client's own upstream connection, byte-exact, so any mechanism the cluster serves
  works. Only the proxy's own Metadata at start (to learn node ids) logs in, with the settings' user,
  when the mechanism is one the remote target speaks (PLAIN, SCRAM); otherwise it goes without.
- `client_settings` turns the user's client settings into those that reach the proxy: the same SASL
  settings, security.protocol as the proxy offers it, and the proxy's CA in place of the cluster's (in the
  spelling the settings used: ssl.ca.location, ssl.ca.pem, ssl.truststore.location/certificates).
"""

from __future__ import annotations

import asyncio
import ssl
from dataclasses import dataclass

from mockbroker.remote.security import ClientSecurity, client_security
from mockbroker.security.protocols import uses_sasl, uses_tls
from mockbroker.security.tls import BrokerTls, TlsConfig

PROXY_HOST = "127.0.0.1"
TRUST_FILES = ("ssl.ca.location", "ssl.truststore.location")
TRUST_PEMS = ("ssl.ca.pem", "ssl.truststore.certificates")


def upstream_security(config: dict[str, str]) -> ClientSecurity:
    """How the proxy reaches the cluster: client_security(config), or, when the SASL settings are ones the
    remote target cannot log in with (OAUTHBEARER, GSSAPI...), the TLS part alone (the clients' own SASL
    passes through). ValueError for a bad TLS setting or protocol."""
    try:
        return client_security(config)
    except ValueError:
        protocol = config.get("security.protocol", "PLAINTEXT").upper()
        if not uses_sasl(protocol):
            raise
        tls_only = {k: v for k, v in config.items() if k.startswith("ssl.") or k == "enable.ssl.certificate.verification"}
        tls_only["security.protocol"] = "SSL" if uses_tls(protocol) else "PLAINTEXT"
        return ClientSecurity(protocol, context=client_security(tls_only).context)


@dataclass
class ProxySecurity:
    """Both sides of the proxy: `upstream` (how it reaches the cluster), `tls` (what it offers clients)."""

    upstream: ClientSecurity
    tls: BrokerTls | None

    @property
    def listener(self) -> str:
        """The security protocol clients speak to the proxy (what received() gives as the listener)."""
        sasl = uses_sasl(self.upstream.protocol)
        if self.tls is not None:
            return "SASL_SSL" if sasl else "SSL"
        return "SASL_PLAINTEXT" if sasl else "PLAINTEXT"

    @property
    def server_context(self) -> ssl.SSLContext | None:
        return None if self.tls is None else self.tls.context

    @property
    def ca_file(self) -> str | None:
        """The PEM file of the CA that signed the proxy's server certificate (None: plaintext to clients)."""
        return None if self.tls is None else self.tls.ca_file

    def client_settings(self, config: dict[str, str]) -> dict[str, str]:
        """The user's client settings, changed to reach the proxy instead of the cluster."""
        out = dict(config)
        if "security.protocol" in out or self.listener != "PLAINTEXT":
            out["security.protocol"] = self.listener
        if self.tls is None:  # plaintext to the proxy: no TLS setting applies
            return {k: v for k, v in out.items() if not k.startswith("ssl.") and k != "enable.ssl.certificate.verification"}
        if self.tls.ca_file is None:  # the user's own certificate: their clients' trust settings stand
            return out
        ca_file, ca_pem = self.tls.ca_file, self.tls.ca_pem.decode("ascii")
        named = [k for k in (*TRUST_FILES, *TRUST_PEMS) if out.get(k)]
        for key in named:
            out[key] = ca_file if key in TRUST_FILES else ca_pem
        if "ssl.truststore.location" in named:
            out["ssl.truststore.type"] = "PEM"
        if not named:
            out["ssl.ca.location"] = ca_file
        return out

    def close(self) -> None:
        if self.tls is not None:
            self.tls.close()


def proxy_security(config: dict[str, str], tls: TlsConfig | bool | None = None) -> ProxySecurity:
    """The proxy's security for the user's client settings `config`; tls: None offers clients TLS when the
    cluster's protocol has it, True always (the throwaway CA), False never, a TlsConfig always, with it."""
    upstream = upstream_security(config)
    offer = uses_tls(upstream.protocol) if tls is None else tls is not False
    if not offer:
        return ProxySecurity(upstream, None)
    settings = tls if isinstance(tls, TlsConfig) else TlsConfig()
    return ProxySecurity(upstream, BrokerTls(settings, [PROXY_HOST, "localhost"]))


async def open_upstream(address: tuple[str, int], security: ClientSecurity,
                        timeout: float) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection to a real broker, in TLS when its protocol asks (the host checked as the settings say)."""
    host, port = address
    if security.context is None:
        return await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
    return await asyncio.wait_for(asyncio.open_connection(host, port, ssl=security.context, server_hostname=host,
                                                          ssl_handshake_timeout=timeout), timeout)
