"""JAAS login configuration text, as Kafka reads it: the `sasl.jaas.config` setting (its JaasConfig: one or more
`<LoginModuleClass> <flag> [name=value ...];`) and a JAAS file (`-Djava.security.auth.login.config=`: named
sections `Name { <module>; ... };`, e.g. `KafkaServer` and `sasl_ssl.KafkaServer`).

Pure: text in, LoginModule values out, or JaasError with one message naming the problem and where it is.
Tokens as Java's parsers see them: words, "quoted" or 'quoted' strings (backslash escapes), `{ } ; =`, and
`//` and `/* */` comments. Control flags: required, requisite, sufficient, optional (any case).

What a module means to the broker is read by mockbroker/security/settings.py (PlainLoginModule's
`user_<name>="<password>"` options are PLAIN users; ScramLoginModule's username/password are only the
broker's own inter-broker login; OAuthBearerLoginModule's unsecuredValidator* options configure Kafka's
unsecured token validator).
"""

from __future__ import annotations

from dataclasses import dataclass, field

FLAGS = ("required", "requisite", "sufficient", "optional")
_PUNCTUATION = "{};="
_QUOTES = "\"'"
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}


class JaasError(ValueError):
    """JAAS text that cannot be read; the message names the problem (`key`: the setting it came from, if known)."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class LoginModule:
    class_name: str  # e.g. org.apache.kafka.common.security.plain.PlainLoginModule
    flag: str  # required, requisite, sufficient, optional (lower case)
    options: dict[str, str] = field(default_factory=dict)

    @property
    def short_name(self) -> str:
        return self.class_name.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class _Token:
    kind: str  # "word", "string", or the punctuation character itself
    text: str
    line: int

    def shown(self) -> str:
        return f"'{self.text}'" if self.kind != "string" else f'"{self.text}"'


def _tokens(text: str) -> list[_Token]:
    out: list[_Token] = []
    i, line, n = 0, 1, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif c.isspace():
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise JaasError(f"line {line}: a /* comment is not closed")
            line += text.count("\n", i, end)
            i = end + 2
        elif c in _PUNCTUATION:
            out.append(_Token(c, c, line))
            i += 1
        elif c in _QUOTES:
            start_line, i, chars = line, i + 1, []
            while True:
                if i >= n:
                    raise JaasError(f"line {start_line}: a quoted string is not closed (missing {c})")
                d = text[i]
                if d == c:
                    i += 1
                    break
                if d == "\\" and i + 1 < n:
                    i += 1
                    d = _ESCAPES.get(text[i], text[i])
                if d == "\n":
                    line += 1
                chars.append(d)
                i += 1
            out.append(_Token("string", "".join(chars), start_line))
        else:
            start = i
            while i < n and not text[i].isspace() and text[i] not in _PUNCTUATION + _QUOTES \
                    and not text.startswith("//", i) and not text.startswith("/*", i):
                i += 1
            out.append(_Token("word", text[start:i], line))
    return out


class _Reader:
    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.pos = 0

    def peek(self) -> _Token | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def next(self, expected: str) -> _Token:
        token = self.peek()
        if token is None:
            raise JaasError(f"the text ends where {expected} was expected")
        self.pos += 1
        return token

    def module(self) -> LoginModule:
        name = self.next("a login module class name")
        if name.kind != "word":
            raise JaasError(f"line {name.line}: expected a login module class name, found {name.shown()}")
        where = f"login module {name.text} (line {name.line})"
        flag = self.peek()
        if flag is None or flag.kind != "word":
            raise JaasError(f"{where}: missing its control flag ({', '.join(FLAGS)})")
        self.pos += 1
        if flag.text.lower() not in FLAGS:
            raise JaasError(f"{where}: unknown control flag {flag.shown()} (one of {', '.join(FLAGS)})")
        options: dict[str, str] = {}
        while True:
            token = self.peek()
            if token is None:
                raise JaasError(f"{where}: missing ';' at its end")
            if token.kind == ";":
                self.pos += 1
                return LoginModule(name.text, flag.text.lower(), options)
            if token.kind != "word":
                raise JaasError(f"{where}: expected an option name=value or ';', found {token.shown()}")
            self.pos += 1
            equals = self.peek()
            if equals is None or equals.kind != "=":
                raise JaasError(f"{where}: option {token.text} has no '=value' (a missing ';' before it?)")
            self.pos += 1
            value = self.peek()
            if value is None or value.kind not in ("word", "string"):
                found = value.shown() if value is not None else "the end"
                raise JaasError(f"{where}: option {token.text} has no value (found {found})")
            self.pos += 1
            if token.text in options:
                raise JaasError(f"{where}: option {token.text} is given twice")
            options[token.text] = value.text


def parse_jaas_config(text: str) -> list[LoginModule]:
    """The login modules of a sasl.jaas.config value (at least one)."""
    reader = _Reader(text)
    modules = []
    while reader.peek() is not None:
        modules.append(reader.module())
    if not modules:
        raise JaasError("no login module (expected '<LoginModuleClass> required [name=value ...];')")
    return modules


def parse_jaas_file(text: str) -> dict[str, list[LoginModule]]:
    """The sections of a JAAS file by name (`KafkaServer`, `sasl_ssl.KafkaServer`, `Client`, ...)."""
    reader = _Reader(text)
    sections: dict[str, list[LoginModule]] = {}
    while (name := reader.peek()) is not None:
        reader.pos += 1
        if name.kind != "word":
            raise JaasError(f"line {name.line}: expected a section name (e.g. KafkaServer), found {name.shown()}")
        brace = reader.next(f"'{{' after section {name.text}")
        if brace.kind != "{":
            raise JaasError(f"line {brace.line}: expected '{{' after section {name.text}, found {brace.shown()}")
        modules = []
        while True:
            token = reader.peek()
            if token is None:
                raise JaasError(f"section {name.text} (line {name.line}): missing '}}' at its end")
            if token.kind == "}":
                reader.pos += 1
                break
            modules.append(reader.module())
        end = reader.peek()
        if end is None or end.kind != ";":
            raise JaasError(f"section {name.text} (line {name.line}): missing ';' after its '}}'")
        reader.pos += 1
        if name.text in sections:
            raise JaasError(f"section {name.text} appears twice")
        sections[name.text] = modules
    if not sections:
        raise JaasError("no section (expected e.g. 'KafkaServer { <LoginModuleClass> required ...; };')")
    return sections
