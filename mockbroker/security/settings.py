"""A broker's listener security from its settings (mockbroker/settings.py): the Python API's objects (users,
mechanisms, TLS, OAuth, the ACL switches) and Kafka's setting names (sasl.enabled.mechanisms, ssl.*,
sasl.oauthbearer.* (oauth_settings.py), connections.failed.authentication.delay.ms, sasl.server.max.receive.size, connections.max.reauth.ms,
authorizer.class.name, super.users, allow.everyone.if.no.acl.found), and SASL users and logins from JAAS
(sasl.jaas.config, listener.name.<listener>.<mechanism>.sasl.jaas.config, a JAAS file's KafkaServer sections:
mockbroker/security/jaas.py reads the text) and SCRAM credentials in kafka-storage's --add-scram form: what
`MockBroker(config=...)` and the Kafka images' environment give.

Kafka scopes a listener's JAAS users to that listener; mockbroker keeps one list of users for every listener
(a user given twice with different passwords is an error)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mockbroker.security import BrokerSecurity
from mockbroker.security.jaas import JaasError, LoginModule, parse_jaas_config, parse_jaas_file

if TYPE_CHECKING:
    from mockbroker.security.authorizer import Authorizer
    from mockbroker.security.tls import TlsConfig
    from mockbroker.settings import Settings


def security_from_settings(settings: Settings) -> BrokerSecurity:
    """The broker's security from its settings: the listeners (their protocols resolved by make_settings), SASL
    mechanisms, TLS, OAuth and the authorizer from the Python API's objects where given, else from Kafka's
    setting names; the users given and those of the JAAS settings and SCRAM credentials."""
    config = settings.config
    mechanisms = list(settings.sasl_mechanisms) if settings.sasl_mechanisms is not None else None
    if mechanisms is None and config.get("sasl.enabled.mechanisms"):
        mechanisms = [m.strip() for m in str(config["sasl.enabled.mechanisms"]).split(",") if m.strip()]
    tls = settings.tls
    if tls is None and any(key.startswith("ssl.") for key in config):
        tls = tls_from_settings(config)
    oauth = settings.oauth
    if oauth is None and any(key.startswith("sasl.oauthbearer.") for key in config):
        from mockbroker.security.oauth_settings import oauth_from_settings

        oauth = oauth_from_settings(config)
    try:
        logins = sasl_logins(config)
    except JaasError as exc:
        raise ValueError(f"{exc.key}: {exc}") from None
    if oauth is None and logins.oauth is not None:
        from mockbroker.security.oauth import OAuthConfig

        oauth = OAuthConfig(**logins.oauth)
    delay = int(config.get("connections.failed.authentication.delay.ms", 100))
    security = BrokerSecurity(list(settings.listeners), mechanisms=mechanisms, tls=tls,
                              failed_authentication_delay_ms=delay, oauth=oauth)
    security.max_receive_before_auth = int(config.get("sasl.server.max.receive.size", 524288))
    security.max_reauth_ms = int(config.get("connections.max.reauth.ms", 0))
    security.authorizer = authorizer_from_settings(config, settings.acls,
                                                   list(settings.super_users) if settings.super_users else None)
    add_sasl_logins(security, logins)
    for name, password in settings.users.items():
        security.credentials.add_user(name, password, security.mechanisms)
    return security


def authorizer_from_settings(settings: dict[str, Any], acls: bool | None,
                             super_users: list[str] | None) -> Authorizer | None:
    """The authorizer when one is on: authorizer.class.name set (Kafka's StandardAuthorizer is the one
    served, whatever the name), acls=True or super_users given; super.users and
    allow.everyone.if.no.acl.found (false by default) as Kafka reads them."""
    named = bool(str(settings.get("authorizer.class.name") or "").strip())
    if acls is False or not (acls or named or super_users):
        return None
    from mockbroker.security.authorizer import Authorizer, parse_super_users

    allow = str(settings.get("allow.everyone.if.no.acl.found", "false")).strip().lower() == "true"
    users = parse_super_users(settings.get("super.users")) | parse_super_users(super_users)
    return Authorizer(super_users=users, allow_everyone_if_no_acl_found=allow)


def tls_from_settings(settings: dict[str, Any]) -> TlsConfig:
    """TLS key material and client auth in Kafka's setting names: ssl.keystore.location (type PKCS12, or PEM:
    a file with the certificate chain and the key), ssl.keystore.password, ssl.key.password,
    ssl.truststore.location (PKCS12 or PEM CAs for client certificates), ssl.truststore.password,
    ssl.client.auth (none, requested, required)."""
    from mockbroker.security.tls import TlsConfig

    def get(key: str) -> str | None:
        value = settings.get(key)
        return None if value is None or str(value) == "" else str(value)

    keystore, truststore = get("ssl.keystore.location"), get("ssl.truststore.location")
    pem_keystore = (get("ssl.keystore.type") or "PKCS12").upper() == "PEM"
    pem_truststore = (get("ssl.truststore.type") or "PKCS12").upper() == "PEM"
    return TlsConfig(
        certfile=keystore if pem_keystore else None, keyfile=keystore if pem_keystore else None,
        key_password=get("ssl.key.password"),
        keystore=None if pem_keystore else keystore, keystore_password=get("ssl.keystore.password"),
        cafile=truststore if pem_truststore else None, truststore=None if pem_truststore else truststore,
        truststore_password=get("ssl.truststore.password"),
        client_auth=(get("ssl.client.auth") or "none").lower())


# -- SASL users and logins from JAAS settings and SCRAM credentials ------------------------------------------

PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
OAUTH_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
# The JVM system property of a JAAS file (KAFKA_OPTS=-Djava.security.auth.login.config=/path in the images).
JAAS_FILE = "java.security.auth.login.config"
# mockbroker's: SCRAM credentials in kafka-storage format's --add-scram form (MOCKBROKER_SCRAM_CREDENTIALS).
SCRAM_CREDENTIALS = "mockbroker.scram.credentials"
_MODULE_OF_MECHANISM = {"plain": PLAIN_MODULE, "scram-sha-256": SCRAM_MODULE, "scram-sha-512": SCRAM_MODULE,
                        "oauthbearer": OAUTH_MODULE}
# Options each module takes that are the broker's own login (inter-broker, controller) or a client's: no effect here.
_OWN_LOGIN_OPTIONS = {PLAIN_MODULE: ("username", "password"), SCRAM_MODULE: ("username", "password", "tokenauth")}
_OAUTH_VALIDATOR = {"unsecuredValidatorPrincipalClaimName": "principal_claim",
                    "unsecuredValidatorScopeClaimName": "scope_claim",
                    "unsecuredValidatorRequiredScope": "required_scopes",
                    "unsecuredValidatorAllowableClockSkewMs": "allowable_clock_skew_ms"}
_OAUTH_LOGIN_PREFIXES = ("unsecuredLogin",)
_SCRAM_ITERATIONS = (4096, 16384)  # Kafka's bounds


@dataclass
class SaslLogins:
    """What the JAAS settings and SCRAM credentials give the broker."""

    plain_users: dict[str, str] = field(default_factory=dict)  # PlainLoginModule user_<name>="<password>"
    scram: list[tuple[str, str, str, int | None]] = field(default_factory=list)  # (mechanism, name, password, iterations)
    oauth: dict[str, Any] | None = None  # OAuthConfig fields from OAuthBearerLoginModule's unsecuredValidator* options
    unknown: dict[str, str] = field(default_factory=dict)  # "<module> option <name>" -> the setting it is in
    modules: int = 0  # login modules read

    @property
    def has_users(self) -> bool:
        return bool(self.plain_users or self.scram)


# The sasl.* / ssl.* settings read here and in oauth_settings.py (the rest of those prefixes have no effect).
SECURITY_SETTINGS = frozenset({
    "sasl.enabled.mechanisms", "sasl.server.max.receive.size", "sasl.oauthbearer.jwks.endpoint.url",
    "sasl.oauthbearer.expected.audience", "sasl.oauthbearer.expected.issuer", "sasl.oauthbearer.sub.claim.name",
    "sasl.oauthbearer.scope.claim.name", "sasl.oauthbearer.clock.skew.seconds", "ssl.client.auth", "ssl.key.password",
    "ssl.keystore.location", "ssl.keystore.password", "ssl.keystore.type", "ssl.truststore.location",
    "ssl.truststore.password", "ssl.truststore.type",
})


def is_security_setting(key: str) -> bool:
    """A setting this module reads (so the environment layer neither warns about it nor calls it ignored)."""
    return key in SECURITY_SETTINGS or is_jaas_setting(key)


def is_jaas_setting(key: str) -> bool:
    """A setting read here: sasl.jaas.config, listener.name.<listener>.<mechanism>.sasl.jaas.config, the JAAS
    file's property and mockbroker's SCRAM credentials."""
    return key in ("sasl.jaas.config", JAAS_FILE, SCRAM_CREDENTIALS) or (
        key.startswith("listener.name.") and key.endswith(".sasl.jaas.config"))


def _listener_mechanism(key: str) -> str:
    """The mechanism part of listener.name.<listener>.<mechanism>.sasl.jaas.config (listener names may hold '.'
    where an environment variable's '_' became one)."""
    middle = key[len("listener.name."):-len(".sasl.jaas.config")]
    for mechanism in sorted(_MODULE_OF_MECHANISM, key=len, reverse=True):
        for spelling in (mechanism, mechanism.replace("-", ".")):
            if middle.lower().endswith("." + spelling):
                return mechanism
    raise JaasError("no SASL mechanism served here after the listener name "
                    f"(listener.name.<listener>.<{'|'.join(_MODULE_OF_MECHANISM)}>.sasl.jaas.config)")


def _read_module(module: LoginModule, where: str, mechanism: str | None, out: SaslLogins, key: str) -> None:
    """Read one login module into `out`; `where` names it in messages (empty: the setting itself)."""
    expected = _MODULE_OF_MECHANISM.get(mechanism or "")
    if expected is not None and module.class_name != expected:
        raise JaasError(f"{where}the {mechanism.upper()} mechanism logs in with "  # type: ignore[union-attr]
                        f"{expected.rsplit('.', 1)[-1]}, not {module.class_name}")
    if module.class_name not in (PLAIN_MODULE, SCRAM_MODULE, OAUTH_MODULE):
        raise JaasError(f"{where}login module {module.class_name} is not served here (PlainLoginModule, "
                        "ScramLoginModule, OAuthBearerLoginModule)")
    out.modules += 1
    for name, value in module.options.items():
        if module.class_name == PLAIN_MODULE and name.startswith("user_") and len(name) > 5:
            user = name[5:]
            if out.plain_users.get(user, value) != value:
                raise JaasError(f"{where}user {user} has two different PLAIN passwords (mockbroker keeps one list "
                                "of users for every listener)")
            out.plain_users[user] = value
        elif name in _OWN_LOGIN_OPTIONS.get(module.class_name, ()):
            continue  # the broker's own login: there is no inter-broker traffic here
        elif module.class_name == OAUTH_MODULE and name in _OAUTH_VALIDATOR:
            out.oauth = out.oauth or {}
            field_name = _OAUTH_VALIDATOR[name]
            if field_name == "required_scopes":
                out.oauth[field_name] = [s for s in value.replace(",", " ").split() if s]
            elif field_name == "allowable_clock_skew_ms":
                try:
                    out.oauth[field_name] = int(value)
                except ValueError:
                    raise JaasError(f"{where}{name}={value!r} is not a whole number of ms") from None
            else:
                out.oauth[field_name] = value
        elif module.class_name == OAUTH_MODULE and name.startswith(_OAUTH_LOGIN_PREFIXES):
            continue  # the broker's own token (inter-broker login)
        else:
            out.unknown[f"{module.short_name} option {name}"] = key
    if module.class_name == OAUTH_MODULE and out.oauth is None:
        out.oauth = {}


def parse_scram_credentials(text: str) -> list[tuple[str, str, str, int | None]]:
    """kafka-storage format's --add-scram arguments, one or more (blank, ',' or ';' between them):
    `SCRAM-SHA-256=[name=alice,password=secret]` (iterations=N optional; quotes around values allowed)."""
    out: list[tuple[str, str, str, int | None]] = []
    text = text.strip()
    pos = 0
    pattern = re.compile(r"[\s,;]*(?P<mech>[A-Za-z0-9-]+)=\[(?P<body>[^\]]*)\][\s,;]*")
    while pos < len(text):
        m = pattern.match(text, pos)
        if m is None:
            raise JaasError(f"{text[pos:]!r} is not MECHANISM=[name=NAME,password=PASSWORD]")
        pos = m.end()
        mechanism = m["mech"].upper()
        if mechanism not in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
            raise JaasError(f"{m.group(0).strip()!r}: unknown SCRAM mechanism {m['mech']} (SCRAM-SHA-256, SCRAM-SHA-512)")
        fields: dict[str, str] = {}
        for item in m["body"].split(","):
            key, sep, value = item.strip().partition("=")
            if not sep or not key.strip():
                raise JaasError(f"{m.group(0).strip()!r}: {item.strip()!r} is not key=value")
            fields[key.strip().lower()] = value.strip().strip('"')
        extra = sorted(set(fields) - {"name", "password", "iterations"})
        if extra or "name" not in fields or "password" not in fields:
            what = f"unsupported {', '.join(extra)}" if extra else "name and password are both needed"
            raise JaasError(f"{m.group(0).strip()!r}: {what} (name, password, iterations)")
        iterations = None
        if "iterations" in fields:
            if not fields["iterations"].isdigit() or not _SCRAM_ITERATIONS[0] <= int(fields["iterations"]) <= _SCRAM_ITERATIONS[1]:
                raise JaasError(f"{m.group(0).strip()!r}: iterations must be {_SCRAM_ITERATIONS[0]}..{_SCRAM_ITERATIONS[1]}")
            iterations = int(fields["iterations"])
        out.append((mechanism, fields["name"], fields["password"], iterations))
    if not out:
        raise JaasError("no credential (expected SCRAM-SHA-256=[name=NAME,password=PASSWORD])")
    return out


def sasl_logins(settings: Mapping[str, Any]) -> SaslLogins:
    """The users and validator options of the JAAS settings (Kafka's names; the JAAS file named by
    java.security.auth.login.config is read: its KafkaServer and <listener>.KafkaServer sections) and the
    SCRAM credentials. JaasError (its `key` the setting at fault) when one cannot be read."""
    out = SaslLogins()
    for key in sorted(settings):
        if not is_jaas_setting(key) or str(settings[key]).strip() == "":
            continue
        value = str(settings[key])
        try:
            if key == SCRAM_CREDENTIALS:
                out.scram += parse_scram_credentials(value)
            elif key == JAAS_FILE:
                _read_jaas_file(value, out)
            else:
                mechanism = None if key == "sasl.jaas.config" else _listener_mechanism(key)
                modules = parse_jaas_config(value)
                if len(modules) != 1:
                    raise JaasError(f"{len(modules)} login modules; Kafka takes exactly 1 here")
                _read_module(modules[0], "", mechanism, out, key)
        except JaasError as exc:
            raise JaasError(str(exc), key) from None
    return out


def _read_jaas_file(path: str, out: SaslLogins) -> None:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        raise JaasError(f"cannot read the JAAS file {path!r}: {exc.strerror or exc}") from None
    try:
        sections = parse_jaas_file(text)
    except JaasError as exc:
        raise JaasError(f"JAAS file {path!r}: {exc}") from None
    server = {name: modules for name, modules in sections.items() if name.split(".")[-1] == "KafkaServer"}
    if not server:
        raise JaasError(f"JAAS file {path!r} has no KafkaServer section (sections: {', '.join(sections)})")
    for name, modules in server.items():
        for module in modules:
            _read_module(module, f"JAAS file {path!r} section {name}: ", None, out, JAAS_FILE)


def add_sasl_logins(security: BrokerSecurity, logins: SaslLogins) -> None:
    """Give the broker the users of `logins`: PLAIN users for PLAIN only, each SCRAM credential for its mechanism."""
    for name, password in logins.plain_users.items():
        security.credentials.add_user(name, password, ("PLAIN",))
    for mechanism, name, password, iterations in logins.scram:
        if iterations is None:
            security.credentials.add_user(name, password, (mechanism,))
        else:
            security.credentials.add_user(name, password, (mechanism,), iterations)
