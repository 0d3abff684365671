"""Straight-line decode and encode functions for one struct at one version (used by messages.StructCodec).

messages.py prepares, per field, a read and a write function; this module turns a struct's field list
into one Python function each way (source text compiled with exec, once per struct and version), so a
decode or encode is a run of calls with no loop over field objects. Consecutive fixed-size fields (intN,
uintN, float64, bool) are read with one struct.unpack_from and written with one struct.pack.

Behaviour is the field-by-field codec's, including its errors: when the bytes left cannot hold a fixed
group, or a value of the group cannot be packed, the group falls back to its fields' own read and write
functions, which raise the error naming the field. None in a field that is not nullable at the version
encoded (a string, bytes, records, array or struct, as an int) is an EncodeError naming the message, the
field and the version, as Kafka's generated serializers refuse it; the writers raise on None, and only
the failure path looks at why. An encode first checks, in one C-level pass
(frozenset.issuperset), that the mapping holds no key outside the struct's known names. Tagged fields go through the codec's general
functions unless a flexible struct has none on the wire (the one byte 0), the usual case.

The generated source of a struct can be read with `StructCodec.source()`, for debugging.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Protocol

from .errors import EncodeError

# What a missing non-nullable struct field encodes as: every field at its default (an empty mapping, read only).
ALL_DEFAULTS: Mapping[str, Any] = MappingProxyType({})

# Struct format characters of the fixed-size types that can be read and written together.
FORMATS = {"int8": "b", "int16": "h", "int32": "i", "int64": "q", "uint16": "H", "uint32": "I",
           "float64": "d", "bool": "?"}


class Field(Protocol):
    name: str
    read: Callable[..., Any]
    write: Callable[..., None]
    default: Any
    fmt: str | None  # a FORMATS character for a fixed-size field, else None
    struct: Any  # a non-nullable struct's codec (its default is all-defaults), else None
    is_list: bool


def _groups(fields: Sequence[Field]) -> list[list[Field]]:
    """The fields in order, consecutive fixed-size ones (two or more) grouped together."""
    out: list[list[Field]] = []
    for f in fields:
        if f.fmt is not None and out and out[-1][-1].fmt is not None:
            out[-1].append(f)
        else:
            out.append([f])
    return out


class _Source:
    """Source lines plus the namespace of the values they refer to."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names: dict[str, Any] = {}
        self._by_id: dict[int, str] = {}

    def ref(self, prefix: str, value: Any) -> str:
        """The name the source uses for value (one name per object)."""
        name = self._by_id.get(id(value))
        if name is None:
            name = f"{prefix}{len(self.names)}"
            self.names[name] = value  # kept here, so the id stays this object's
            self._by_id[id(value)] = name
        return name

    def add(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    def default_expr(self, f: Field) -> str:
        """A fresh default: a new list or struct each time, the constant otherwise."""
        if f.struct is not None:
            return f"{self.ref('sd', f.struct.defaults)}()"
        if f.is_list:
            return "[]"
        return self.ref("d", f.default)

    def build(self, name: str) -> tuple[Callable[..., Any], str]:
        text = "\n".join(self.lines)
        namespace = dict(self.names)
        exec(compile(text, f"<{name}>", "exec"), namespace)  # noqa: S102 - our own generated source
        return namespace[name], text


def compile_decode(regular: Sequence[Field], tagged: Sequence[Field], absent: Sequence[Field], flexible: bool,
                   msg_type: type, decode_tagged: Callable[[Any, Any], None]) -> tuple[Callable[..., Any], str]:
    """decode(reader) -> msg_type: the regular fields in order, the tagged ones (decode_tagged(reader, msg)
    unless none is on the wire), and the absent fields' defaults."""
    s = _Source()
    msg = s.ref("M", msg_type)
    s.add(0, "def decode(r):")
    s.add(1, f"m = {msg}()")
    s.add(1, "buf = r.buf")
    for group in _groups(regular):
        if len(group) == 1:
            f = group[0]
            s.add(1, f"r.context = {f.name!r}")
            s.add(1, f"m[{f.name!r}] = {s.ref('rd', f.read)}(r)")
            continue
        fmt = struct.Struct(">" + "".join(str(f.fmt) for f in group))
        targets = ", ".join(f"m[{f.name!r}]" for f in group)
        s.add(1, "pos = r.pos")
        s.add(1, f"if pos + {fmt.size} <= r.end:")
        s.add(2, f"{targets}, = {s.ref('u', fmt.unpack_from)}(buf, pos)")
        s.add(2, f"r.pos = pos + {fmt.size}")
        s.add(2, f"r.context = {group[-1].name!r}")
        s.add(1, "else:  # too few bytes: field by field, so the error names the field")
        for f in group:
            s.add(2, f"r.context = {f.name!r}")
            s.add(2, f"m[{f.name!r}] = {s.ref('rd', f.read)}(r)")
    if flexible:
        s.add(1, "r.context = 'tagged fields'")
        s.add(1, "pos = r.pos")
        s.add(1, "if pos < r.end and buf[pos] == 0:  # no tagged field on the wire")
        s.add(2, "r.pos = pos + 1")
        for f in tagged:
            s.add(2, f"m[{f.name!r}] = {s.default_expr(f)}")
        s.add(2, "pass")
        s.add(1, "else:")
        s.add(2, f"{s.ref('dt', decode_tagged)}(r, m)")
    for f in absent:
        s.add(1, f"m[{f.name!r}] = {s.default_expr(f)}")
    s.add(1, "return m")
    return s.build("decode")


def field_error(label: str, v: Any, exc: Exception) -> EncodeError:
    """The EncodeError of a field whose value did not encode; label: 'Struct.path.field' (Message vN, API key K).
    None in a field not nullable at this version is refused as Kafka's generated serializers refuse it."""
    if v is None:
        return EncodeError(f"field {label} is not nullable at this version: None given")
    return EncodeError(f"cannot encode field {label} value {v!r:.200}: {exc}")


def write_field(w: Any, write: Callable[[Any, Any], None], label: str, v: Any) -> None:
    """One field's write, its failure an EncodeError naming the field."""
    try:
        write(w, v)
    except EncodeError:
        raise
    except Exception as exc:  # TypeError, ValueError, OverflowError, struct.error, ...
        raise field_error(label, v, exc) from None


def compile_encode(regular: Sequence[Field], flexible: bool, has_tagged: bool,
                   encode_tagged: Callable[[Any, Any], None], known: frozenset[str] | None = None,
                   refuse: Callable[[Any], None] | None = None, path: str = "struct",
                   where: str = "") -> tuple[Callable[..., None], str]:
    """encode(writer, mapping): the regular fields in order (a missing key takes its default, a missing
    non-nullable struct all its defaults), then, in a flexible struct, the tagged fields
    (encode_tagged(writer, mapping.get)), or the one byte 0 when the struct has none and the mapping carries
    no unknown ones. With known and refuse: a mapping holding a key outside known goes to refuse(mapping)
    (which raises) before anything is written. A field that does not encode (None where the field is not
    nullable, a wrong type, a number out of range) raises EncodeError naming path.field and where (the
    message and version); the writers raise on None, so the check costs nothing on the way that succeeds."""
    s = _Source()
    wf = s.ref("wf", write_field)
    fe = s.ref("fe", field_error)
    suffix = f" ({where})" if where else ""
    s.add(0, "def encode(w, m):")
    s.add(1, "get = m.get")
    if known is not None and refuse is not None:
        # One C-level pass over the mapping's keys (str hashes are cached): measured ~10 ns a key plus ~50 ns.
        s.add(1, f"if not {s.ref('known', known.issuperset)}(m):  # a key no version of the struct has")
        s.add(2, f"{s.ref('refuse', refuse)}(m)")
    for group in _groups(regular):
        if len(group) == 1:
            f = group[0]
            default = ALL_DEFAULTS if f.struct is not None else f.default
            s.add(1, f"v = get({f.name!r}, {s.ref('d', default)})")
            s.add(1, "try:")
            s.add(2, f"{s.ref('wr', f.write)}(w, v)")
            s.add(1, f"except {s.ref('E', EncodeError)}:")
            s.add(2, "raise")
            s.add(1, "except Exception as exc:")
            s.add(2, f"raise {fe}({s.ref('n', f'{path}.{f.name}{suffix}')}, v, exc) from None")
            continue
        fmt = struct.Struct(">" + "".join(str(f.fmt) for f in group))
        values = [f"v{i}" for i in range(len(group))]
        for value, f in zip(values, group, strict=True):
            s.add(1, f"{value} = get({f.name!r}, {s.ref('d', f.default)})")
        s.add(1, "try:")
        s.add(2, f"packed = {s.ref('p', fmt.pack)}({', '.join(values)})")
        s.add(1, "except Exception:  # a value that does not pack: field by field, so the error names it")
        for value, f in zip(values, group, strict=True):
            s.add(2, f"{wf}(w, {s.ref('wr', f.write)}, {s.ref('n', f'{path}.{f.name}{suffix}')}, {value})")
        s.add(1, "else:")
        s.add(2, "w._buf += packed")
    if flexible:
        if has_tagged:
            s.add(1, f"{s.ref('et', encode_tagged)}(w, get)")
        else:
            s.add(1, "if get('_unknown_tags'):")
            s.add(2, f"{s.ref('et', encode_tagged)}(w, get)")
            s.add(1, "else:")
            s.add(2, "w._buf.append(0)")
    s.add(1, "return None")
    return s.build("encode")
