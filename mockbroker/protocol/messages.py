"""Encode and decode any Kafka request or response body, for any (api_key, version) in the specs.

The specs (mockbroker/protocol/_generated/specs.py) are generated from Kafka's JSON schemas. For each struct and
version this module compiles, once, a list of field codecs (a read and a write function per field), so
encoding and decoding are a loop over prepared closures.

Values are `Msg` objects: dicts whose keys are the snake_case field names (TopicData -> topic_data),
readable as attributes (`req.topic_data`). On decode every field of the struct is present: the ones
the version does not carry get their schema default, so a handler can read `req.transactional_id` for
any Produce version. On encode a missing key takes its default; keys the version does not carry are
ignored when some version of the struct has them (one Msg built for every version: throttle_time_ms at
v0), and refused when none has (a misspelling, another message's field): EncodeError naming the key, the
struct's path (ProduceResponse.responses[].partition_responses[]), the API and the version, never a frame
with the field left at its default. None in a field that is not nullable at the version encoded (records,
bytes, string, array, struct, int) is refused the same way, EncodeError naming the field's path, the message
and the version, as Kafka's generated serializers refuse it; a tagged field is the exception: None there
stands for its default (left off the wire). Unknown tagged fields are kept under the key `_unknown_tags`
as (tag, bytes) pairs and written back on encode.

Type mapping: intN/uintN -> int, float64 -> float, bool -> bool, string -> str (None when null),
bytes -> bytes, uuid -> uuid.UUID (the zero UUID for null/default), records -> memoryview over the
input (no copy) on decode; on encode a records value may be bytes-like or a list of bytes-like chunks
(served as they are, e.g. stored batches), arrays -> list, structs -> Msg.
"""

from __future__ import annotations

import uuid as _uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ._generated.specs import MESSAGES
from .errors import DecodeError, EncodeError, UnsupportedVersion
from .primitives import ZERO_UUID, Reader, Writer
from .struct_compiler import FORMATS, compile_decode, compile_encode

__all__ = [
    "Msg",
    "api_name",
    "api_keys",
    "version_range",
    "is_flexible",
    "decode_request",
    "encode_request",
    "decode_response",
    "encode_response",
    "struct_codec",
    "StructCodec",
]

REQUEST = 1
RESPONSE = 2

ReadFn = Callable[[Reader], Any]
WriteFn = Callable[[Writer, Any], None]


class Msg(dict):  # type: ignore[type-arg]
    """A decoded message or struct: a dict of field name -> value, also readable as attributes."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value


# --- primitive codecs ------------------------------------------------------------------------

_FIXED_READ: dict[str, ReadFn] = {
    "int8": Reader.int8,
    "int16": Reader.int16,
    "int32": Reader.int32,
    "int64": Reader.int64,
    "uint16": Reader.uint16,
    "uint32": Reader.uint32,
    "float64": Reader.float64,
    "bool": Reader.boolean,
    "uuid": Reader.uuid,
}
_FIXED_WRITE: dict[str, WriteFn] = {
    "int8": Writer.int8,
    "int16": Writer.int16,
    "int32": Writer.int32,
    "int64": Writer.int64,
    "uint16": Writer.uint16,
    "uint32": Writer.uint32,
    "float64": Writer.float64,
    "bool": Writer.boolean,
    "uuid": Writer.uuid,
}
_FIXED_SIZE = {"int8": 1, "int16": 2, "int32": 4, "int64": 8, "uint16": 2, "uint32": 4,
               "float64": 8, "bool": 1, "uuid": 16}


def _read_bytes_copy(fn: Callable[[Reader], Any]) -> ReadFn:
    def read(r: Reader) -> bytes | None:
        v = fn(r)
        return None if v is None else bytes(v)

    return read


def _primitive_read(ftype: str, compact: bool, nullable: bool) -> ReadFn:
    if ftype in _FIXED_READ:
        return _FIXED_READ[ftype]
    if ftype == "string":
        if compact:
            return Reader.compact_nullable_string if nullable else Reader.compact_string
        return Reader.nullable_string if nullable else Reader.string
    if ftype == "bytes":
        if compact:
            return _read_bytes_copy(Reader.compact_nullable_bytes if nullable else Reader.compact_bytes)
        return _read_bytes_copy(Reader.nullable_bytes if nullable else Reader.bytes_)
    if ftype == "records":
        # Read as nullable whatever the schema says (lenient on decode); kept as a view (no copy).
        return Reader.compact_nullable_bytes if compact else Reader.nullable_bytes
    raise AssertionError(f"unknown primitive {ftype}")


def _write_string(compact: bool, nullable: bool) -> WriteFn:
    if compact:
        return Writer.compact_nullable_string if nullable else Writer.compact_string
    return Writer.nullable_string if nullable else Writer.string


def _write_records(compact: bool, nullable: bool) -> WriteFn:
    def write(w: Writer, v: Any) -> None:
        if v is None:
            if not nullable:
                raise ValueError("null records in a non-nullable field")
            if compact:
                w.uvarint(0)
            else:
                w.int32(-1)
            return
        if isinstance(v, (bytes, bytearray, memoryview)):
            chunks: list[Any] = [v]
        else:
            chunks = list(v)
        total = 0
        for c in chunks:
            total += c.nbytes if isinstance(c, memoryview) else len(c)
        if compact:
            w.uvarint(total + 1)
        else:
            w.int32(total)
        w.raw_chunks(chunks)

    return write


def _primitive_write(ftype: str, compact: bool, nullable: bool) -> WriteFn:
    if ftype in _FIXED_WRITE:
        return _FIXED_WRITE[ftype]
    if ftype == "string":
        return _write_string(compact, nullable)
    if ftype == "bytes":
        if compact:
            return Writer.compact_nullable_bytes if nullable else Writer.compact_bytes
        return Writer.nullable_bytes if nullable else Writer.bytes_
    if ftype == "records":
        return _write_records(compact, nullable)
    raise AssertionError(f"unknown primitive {ftype}")


def _array_read(elem: ReadFn, compact: bool, nullable: bool, min_size: int) -> ReadFn:
    def read(r: Reader) -> list[Any] | None:
        n = r.compact_array_length(min_size) if compact else r.array_length(min_size)
        if n < 0:
            if not nullable:
                raise r.error("null array in a non-nullable field")
            return None
        return [elem(r) for _ in range(n)]

    return read


def _array_write(elem: WriteFn, compact: bool, nullable: bool) -> WriteFn:
    def write(w: Writer, v: Any) -> None:
        if v is None:
            if not nullable:
                raise ValueError("null array in a non-nullable field")
            if compact:
                w.uvarint(0)
            else:
                w.int32(-1)
            return
        if compact:
            w.uvarint(len(v) + 1)
        else:
            w.int32(len(v))
        for item in v:
            elem(w, item)

    return write


# --- struct codec ----------------------------------------------------------------------------


class _Field:
    __slots__ = ("name", "read", "write", "default", "tag", "is_list", "nullable", "struct", "fmt")

    def __init__(self, name: str, read: ReadFn, write: WriteFn, default: Any, tag: int | None,
                 nullable: bool = False, fmt: str | None = None) -> None:
        self.name = name
        self.read = read
        self.write = write
        self.default = default
        self.tag = tag
        self.is_list = isinstance(default, list)
        self.nullable = nullable
        self.struct: StructCodec | None = None  # set for a non-nullable struct: its default is all-defaults
        self.fmt = fmt  # struct_compiler.FORMATS character of a fixed-size field (read and written in groups)

    def fresh_default(self) -> Any:
        if self.struct is not None:
            return self.struct.defaults()
        return [] if self.is_list else self.default


def _in(rng: tuple[int, int] | None, version: int) -> bool:
    return rng is not None and rng[0] <= version <= rng[1]


class StructCodec:
    """Reads and writes one struct (a message body or a nested struct) at one version: `decode(reader)`
    and `encode(writer, mapping)` are compiled from the field list (mockbroker/protocol/struct_compiler.py)."""

    __slots__ = ("regular", "tagged", "tag_map", "flexible", "absent", "decode", "encode", "_sources", "known",
                 "path", "where")

    decode: Callable[[Reader], Msg]
    encode: Callable[[Writer, Mapping[str, Any]], None]

    def __init__(self, fields: tuple[Any, ...], version: int, flexible: bool,
                 newest: tuple[Any, ...] | None = None, others: Sequence[tuple[Any, ...]] = (),
                 path: str = "struct", where: str = "") -> None:
        """fields: the struct's spec for the segment holding `version`. newest: the same struct in the
        newest segment, when that is another one: its fields missing here are decoded as defaults too,
        so a handler reads every field of today's schema at any version. others: the same struct in the
        other segments (with fields and newest, every name the encoder accepts). path: the struct's place
        in its message (ProduceResponse.responses[]); where: the message and version, for errors."""
        self.flexible = flexible
        self.path = path
        self.where = where
        specs = [fields, *([newest] if newest else []), *others]
        self.known = frozenset({"_unknown_tags", *(spec[0] for variant in specs for spec in variant)})
        self.regular: list[_Field] = []
        self.tagged: list[_Field] = []
        self.absent: list[_Field] = []
        newest_by_name = {spec[0]: spec for spec in newest} if newest else {}
        for spec in fields:
            name, ftype, versions, nullable_v, tagged_v, tag, default, never_flex, sub = spec
            nullable = _in(nullable_v, version)
            compact = flexible and not never_flex
            if ftype in ("struct", "[]struct"):
                twin = newest_by_name.get(name)
                kin = [spec[8] for variant in specs[1:] for spec in variant if spec[0] == name and spec[8]]
                child = StructCodec(sub, version, flexible, twin[8] if twin else None, kin,
                                    f"{path}.{name}{'[]' if ftype == '[]struct' else ''}", where)
                if ftype == "struct":
                    read, write = _struct_read(child, nullable), _struct_write(child, nullable)
                else:
                    # nullableVersions of a struct array make the array nullable, never its
                    # elements: they carry no int8 presence marker.
                    read = _array_read(_struct_read(child, False), compact, nullable, 1)
                    write = _array_write(_struct_write(child, False), compact, nullable)
            elif ftype.startswith("[]"):
                base = ftype[2:]
                read = _array_read(_primitive_read(base, compact, False), compact, nullable,
                                   _FIXED_SIZE.get(base, 1))
                write = _array_write(_primitive_write(base, compact, False), compact, nullable)
            else:
                read = _primitive_read(ftype, compact, nullable)
                write = _primitive_write(ftype, compact, nullable)
            if ftype == "uuid" and default is None:
                default = ZERO_UUID
            fmt = FORMATS.get(ftype) if not nullable else None
            field = _Field(name, read, write, default, tag, nullable, fmt)
            if ftype == "struct" and not _in(nullable_v, version) and default is None:
                field.struct = child
            if not _in(versions, version):
                self.absent.append(field)
            elif flexible and _in(tagged_v, version):
                self.tagged.append(field)
            else:
                self.regular.append(field)
        present = {spec[0] for spec in fields}
        for name, spec in newest_by_name.items():
            if name not in present:
                default = spec[6]
                if spec[1] == "uuid" and default is None:
                    default = ZERO_UUID
                self.absent.append(_Field(name, _never_read, _never_write, default, None, False))
        self.tagged.sort(key=lambda f: f.tag or 0)
        self.tag_map = {f.tag: f for f in self.tagged}
        self.decode, decode_source = compile_decode(self.regular, self.tagged, self.absent, flexible, Msg,
                                                    self._decode_tagged)
        self.encode, encode_source = compile_encode(self.regular, flexible, bool(self.tagged), self._encode_tagged,
                                                    self.known, self._refuse, path, where)
        self._sources = (decode_source, encode_source)

    def source(self) -> str:
        """The generated decode and encode functions' source text (for debugging)."""
        return "\n\n".join(self._sources)

    def defaults(self) -> Msg:
        """The struct with every field at its default (what a struct that is not on the wire decodes as)."""
        m = Msg()
        for group in (self.regular, self.tagged, self.absent):
            for f in group:
                m[f.name] = f.fresh_default()
        return m

    def is_default(self, value: Any) -> bool:
        """Whether a struct value holds nothing but defaults (then a tagged struct is left off the wire)."""
        if not isinstance(value, Mapping):
            return False
        defaults = self.defaults()
        merged = {**defaults, **{k: v for k, v in value.items() if k != "_unknown_tags" or v}}
        return merged == defaults

    def _refuse(self, m: Mapping[str, Any]) -> None:
        """A mapping with keys no version of this struct has: EncodeError naming them (a bug of ours)."""
        unknown = sorted(str(k) for k in m if k not in self.known)
        where = f" ({self.where})" if self.where else ""
        raise EncodeError(f"unknown field{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} in "
                          f"{self.path}{where}: no version of the schema has {'them' if len(unknown) > 1 else 'it'}")

    def _decode_tagged(self, r: Reader, m: Msg) -> None:
        """The tagged fields on the wire into m (unknown ones under _unknown_tags), defaults for the rest."""
        seen: set[int] = set()
        for tag, data in r.tagged_fields():
            tf = self.tag_map.get(tag)
            if tf is None:
                m.setdefault("_unknown_tags", []).append((tag, bytes(data)))
                continue
            sub = Reader(data)
            sub.context = tf.name
            m[tf.name] = tf.read(sub)
            seen.add(tag)
        for f in self.tagged:
            if f.tag not in seen:
                m[f.name] = f.fresh_default()

    def _encode_tagged(self, w: Writer, get: Callable[[str, Any], Any]) -> None:
        """The tagged fields not at their default, and the unknown ones kept from a decode, in tag order."""
        items: list[tuple[int, bytes]] = []
        for f in self.tagged:
            v = get(f.name, f.default)
            # A tagged field is left out when it holds its default. None stands for the default
            # unless the field is nullable: a null where the default is not null is written.
            if v == f.default or (v is None and not f.nullable) or (
                f.struct is not None and f.struct.is_default(v)
            ):
                continue
            sub = Writer()
            try:
                f.write(sub, v)
            except Exception as exc:
                raise EncodeError(f"cannot encode tagged field {f.name!r} value {v!r}: {exc}") from None
            assert f.tag is not None
            items.append((f.tag, sub.getvalue()))
        unknown = get("_unknown_tags", None)
        if unknown:
            items.extend((int(t), bytes(d)) for t, d in unknown)
            items.sort(key=lambda i: i[0])
        w.uvarint(len(items))
        for tag, data in items:
            w.uvarint(tag)
            w.uvarint(len(data))
            w.raw(data)


def _never_read(r: Reader) -> Any:
    raise AssertionError("a field absent from this version is never read")


def _never_write(w: Writer, v: Any) -> None:
    raise AssertionError("a field absent from this version is never written")


def _struct_read(codec: StructCodec, nullable: bool) -> ReadFn:
    if not nullable:
        return codec.decode

    def read(r: Reader) -> Msg | None:
        marker = r.int8()
        if marker < 0:
            return None
        return codec.decode(r)

    return read


def _struct_write(codec: StructCodec, nullable: bool) -> WriteFn:
    encode = codec.encode
    if not nullable:
        def write_present(w: Writer, v: Any) -> None:
            if v is None:
                raise ValueError("null struct in a non-nullable field")
            encode(w, v)

        return write_present

    def write(w: Writer, v: Any) -> None:
        if v is None:
            w.int8(-1)
            return
        w.int8(1)
        encode(w, v)

    return write


# --- message lookup --------------------------------------------------------------------------

_CACHE: dict[tuple[int, int, int], StructCodec] = {}


def _segment(api_key: int, kind: int, version: int) -> tuple[Any, ...]:
    entry = MESSAGES.get(api_key)
    if entry is None:
        raise UnsupportedVersion(f"unknown API key {api_key}")
    for seg in entry[kind]:
        if seg[0] <= version <= seg[1]:
            return seg
    raise UnsupportedVersion(f"{entry[0]} v{version} is not in the schemas")


def struct_codec(api_key: int, version: int, kind: int) -> StructCodec:
    """The compiled codec of a request (kind=REQUEST) or response (kind=RESPONSE) body."""
    key = (api_key, kind, version)
    codec = _CACHE.get(key)
    if codec is None:
        lo, hi, flex_from, fields = _segment(api_key, kind, version)
        segments = MESSAGES[api_key][kind]
        newest = segments[-1][3]
        others = [seg[3] for seg in segments if seg[3] is not fields and seg[3] is not newest]
        name = api_name(api_key) + ("Request" if kind == REQUEST else "Response")
        codec = StructCodec(fields, version, flex_from is not None and version >= flex_from,
                            newest if newest is not fields else None, others, name,
                            f"{name} v{version}, API key {api_key}")
        _CACHE[key] = codec
    return codec


def api_keys() -> list[int]:
    return sorted(MESSAGES)


def api_name(api_key: int) -> str:
    entry = MESSAGES.get(api_key)
    return entry[0] if entry else f"Unknown({api_key})"


def version_range(api_key: int) -> tuple[int, int]:
    """Oldest and newest version the schemas describe for an API key (request side)."""
    segs = MESSAGES[api_key][REQUEST]
    return (segs[0][0], segs[-1][1])


_FLEXIBLE: dict[tuple[int, int], bool] = {}


def is_flexible(api_key: int, version: int) -> bool:
    """Whether (api_key, version) uses flexible encoding; for versions past the schemas, the newest rule.
    (Asked twice per request, for its header and its answer's: remembered per key and version.)"""
    known = _FLEXIBLE.get((api_key, version))
    if known is None:
        known = _FLEXIBLE[(api_key, version)] = _is_flexible(api_key, version)
    return known


def _is_flexible(api_key: int, version: int) -> bool:
    segs = MESSAGES[api_key][REQUEST]
    for seg in segs:
        if seg[0] <= version <= seg[1]:
            return seg[2] is not None and version >= seg[2]
    last = segs[-1]
    return version > last[1] and last[2] is not None


def _decode(api_key: int, version: int, kind: int, data: bytes | bytearray | memoryview | Reader) -> Msg:
    codec = struct_codec(api_key, version, kind)
    r = data if isinstance(data, Reader) else Reader(data)
    try:
        return codec.decode(r)
    except DecodeError:
        raise
    except RecursionError:
        raise DecodeError(f"{api_name(api_key)} v{version}: nesting too deep") from None


def _encode(api_key: int, version: int, kind: int, msg: Mapping[str, Any], w: Writer | None) -> Writer:
    codec = struct_codec(api_key, version, kind)
    w = Writer() if w is None else w
    codec.encode(w, msg)
    return w


def decode_request(api_key: int, version: int, data: bytes | bytearray | memoryview | Reader) -> Msg:
    """Decode a request body (the bytes after the request header)."""
    return _decode(api_key, version, REQUEST, data)


def decode_response(api_key: int, version: int, data: bytes | bytearray | memoryview | Reader) -> Msg:
    """Decode a response body (the bytes after the response header)."""
    return _decode(api_key, version, RESPONSE, data)


def encode_request(api_key: int, version: int, msg: Mapping[str, Any], w: Writer | None = None) -> Writer:
    return _encode(api_key, version, REQUEST, msg, w)


def encode_response(api_key: int, version: int, msg: Mapping[str, Any], w: Writer | None = None) -> Writer:
    return _encode(api_key, version, RESPONSE, msg, w)


def to_uuid(value: Any) -> _uuid.UUID:
    """Normalise None/str/bytes/UUID to a UUID (None -> the zero UUID)."""
    if value is None:
        return ZERO_UUID
    if isinstance(value, _uuid.UUID):
        return value
    if isinstance(value, (bytes, bytearray)):
        return _uuid.UUID(bytes=bytes(value))
    return _uuid.UUID(str(value))
