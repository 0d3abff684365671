"""Kafka's default TLS principal (ssl.principal.mapping.rules=DEFAULT): the client certificate's subject as
Java's X500Principal.getName() writes it in RFC 2253 form: last RDN first, keywords only for the RFC 2253
types, other types (emailAddress) as the dotted OID and `#` with the hex of the value's DER encoding, and
Java's escaping."""

from __future__ import annotations

from cryptography import x509
from cryptography.x509.name import _ASN1Type
from cryptography.x509.oid import NameOID

from mockbroker.security.tls import rfc2253

A = x509.NameAttribute


def test_keywords_in_reverse_order() -> None:
    name = x509.Name([A(NameOID.COUNTRY_NAME, "US"), A(NameOID.STATE_OR_PROVINCE_NAME, "CA"),
                      A(NameOID.LOCALITY_NAME, "Palo Alto"), A(NameOID.ORGANIZATION_NAME, "Acme"),
                      A(NameOID.ORGANIZATIONAL_UNIT_NAME, "payments"), A(NameOID.DOMAIN_COMPONENT, "example"),
                      A(NameOID.USER_ID, "u1"), A(NameOID.STREET_ADDRESS, "Main St"), A(NameOID.COMMON_NAME, "alice")])
    assert rfc2253(name) == "CN=alice,STREET=Main St,UID=u1,DC=example,OU=payments,O=Acme,L=Palo Alto,ST=CA,C=US"


def test_types_without_a_keyword_are_the_oid_and_the_hex_of_their_der_value() -> None:
    name = x509.Name([A(NameOID.EMAIL_ADDRESS, "alice@example.com"), A(NameOID.COMMON_NAME, "alice")])
    # Java: CN=alice,1.2.840.113549.1.9.1=#16116... (IA5String, 17 bytes); cryptography's RFC 4514 form
    # would be 1.2.840.113549.1.9.1=alice@example.com, which is not what Kafka's principal is.
    assert rfc2253(name) == "CN=alice,1.2.840.113549.1.9.1=#1611" + b"alice@example.com".hex()
    serial = x509.Name([A(NameOID.SERIAL_NUMBER, "42", _ASN1Type.PrintableString)])
    assert rfc2253(serial) == "2.5.4.5=#13023432"


def test_javas_escaping() -> None:
    name = x509.Name([A(NameOID.ORGANIZATION_NAME, "Acme, Inc.+Co <x>;\"q\"\\"),
                      A(NameOID.COMMON_NAME, " a=b #1 ")])
    assert rfc2253(name) == "CN=\\ a\\=b \\#1\\ ,O=Acme\\, Inc.\\+Co \\<x\\>\\;\\\"q\\\"\\\\"

