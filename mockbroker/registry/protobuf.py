"""Protobuf schemas for the Schema Registry (schemaType "PROTOBUF"): parsing, identity, the text served,
and Confluent's Protobuf compatibility rules as a faithful subset.

A schema comes in two forms, both accepted as Confluent's registry accepts them: the `.proto` text, compiled
by protoc itself (grpcio-tools' in-process compiler, so every error is protoc's own), or a serialized
FileDescriptorProto in base64 (what confluent-kafka's Python ProtobufSerializer sends). Either becomes a
FileDescriptorProto, checked by building it into a DescriptorPool with its imports: the referenced schemas
(Confluent's references: an import's name is a reference's name) and the well-known google/protobuf types.
Identity is that descriptor serialized deterministically, its file name left out; the text served is the
text as registered, or for a descriptor its `.proto` rendering (`render`), as Confluent serves text.

`differences(original, update)` follows Confluent's ProtobufSchema diff (its protobuf-provider's SchemaDiff,
MessageSchemaDiff, FieldSchemaDiff): package, messages and enums added/removed/moved, fields by number
(added, removed, renamed, their kind: scalar/enum, message, map; scalars by wire-compatible group), required
fields (proto2), oneofs and fields moved into them, repeated-ness of numeric fields, message types compared
by their local name and then field by field, each change a Difference (registry/differences.py); the ones
RULES does not call compatible are incompatibilities, all described by one template naming the change.
"""

from __future__ import annotations

import ast
import base64
import binascii
import importlib
import importlib.resources
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mockbroker.extras import require
from mockbroker.registry.avro import InvalidSchema
from mockbroker.registry.differences import Difference, Rules

require("google.protobuf", "the Schema Registry's Protobuf support")
descriptor_pb2 = importlib.import_module("google.protobuf.descriptor_pb2")  # (no type stubs: imported by name)
descriptor_pool = importlib.import_module("google.protobuf.descriptor_pool")
FDP = descriptor_pb2.FileDescriptorProto
F = descriptor_pb2.FieldDescriptorProto

MAIN_FILE = "schema.proto"  # the file name a schema given as text is compiled under
_COMPATIBLE = frozenset({"MESSAGE_ADDED", "MESSAGE_MOVED", "ENUM_ADDED", "ENUM_REMOVED", "ENUM_CONST_ADDED",
                        "ENUM_CONST_CHANGED", "ENUM_CONST_REMOVED", "FIELD_ADDED", "FIELD_REMOVED",
                        "FIELD_NAME_CHANGED", "FIELD_STRING_OR_BYTES_LABEL_CHANGED", "ONEOF_ADDED", "ONEOF_REMOVED",
                        "ONEOF_FIELD_ADDED"})
RULES = Rules(_COMPATIBLE, fallback="The {reader} schema has a change at path '{path}' that the {writer} schema's "
                                    "data does not allow ({type})")
SCALARS = {F.TYPE_DOUBLE: "double", F.TYPE_FLOAT: "float", F.TYPE_INT64: "int64", F.TYPE_UINT64: "uint64",
           F.TYPE_INT32: "int32", F.TYPE_FIXED64: "fixed64", F.TYPE_FIXED32: "fixed32", F.TYPE_BOOL: "bool",
           F.TYPE_STRING: "string", F.TYPE_BYTES: "bytes", F.TYPE_UINT32: "uint32", F.TYPE_SFIXED32: "sfixed32",
           F.TYPE_SFIXED64: "sfixed64", F.TYPE_SINT32: "sint32", F.TYPE_SINT64: "sint64"}
# the wire-compatible groups of scalars (protobuf's "updating a message type" rules), enums with the varints
GROUPS = {"int32": "number", "int64": "number", "uint32": "number", "uint64": "number", "bool": "number",
          "enum": "number", "sint32": "signed", "sint64": "signed", "string": "text", "bytes": "text",
          "fixed32": "fixed32", "sfixed32": "fixed32", "fixed64": "fixed64", "sfixed64": "fixed64",
          "float": "float", "double": "double"}


@dataclass
class ProtobufSchema:
    """A parsed schema: its FileDescriptorProto, those of its imports (dependencies first), identity, text."""
    file: Any
    imports: list[Any]
    canonical: str
    text: str
    schema_type: str = "PROTOBUF"

    def serialized(self) -> str:
        """The descriptor in base64, as Confluent serves `?format=serialized`."""
        return base64.b64encode(self.file.SerializeToString(deterministic=True)).decode()

    def pool(self) -> Any:
        """A DescriptorPool holding the schema and its imports."""
        pool = descriptor_pool.DescriptorPool()
        for proto in [*self.imports, self.file]:
            pool.Add(proto)
        return pool


def parse(text: str, referenced: dict[str, ProtobufSchema] | None = None) -> ProtobufSchema:
    """The schema of `text` (`.proto` text or a base64 FileDescriptorProto), whose imports may name the
    `referenced` schemas by their reference names; InvalidSchema when protoc or the pool refuses it."""
    referenced = referenced or {}
    proto = _from_base64(text)
    given_text = proto is None
    if proto is None:
        proto = _compile(text, referenced)
    imports = _imports(proto, referenced)
    schema = ProtobufSchema(proto, imports, "", text if given_text else "")
    try:
        schema.pool()
    except Exception as exc:  # the pool's TypeError for an unresolved type, a duplicate name...
        raise InvalidSchema(f"Invalid protobuf schema: {exc}") from None
    identity = FDP()
    identity.CopyFrom(proto)
    identity.ClearField("name")
    schema.canonical = base64.b64encode(identity.SerializeToString(deterministic=True)).decode()
    if not given_text:
        schema.text = render(proto)
    return schema


def normalized(schema: ProtobufSchema) -> ProtobufSchema:
    """The schema as `normalize=true` registers it: every message's fields in number order, imports sorted,
    served as its rendering (so texts differing only in field order or layout are one schema)."""
    proto = FDP()
    proto.CopyFrom(schema.file)

    def sort(messages: Any) -> None:
        for message in messages:
            fields = sorted(message.field, key=lambda f: f.number)
            copies = [F() for _ in fields]
            for copy, f in zip(copies, fields, strict=True):
                copy.CopyFrom(f)
            del message.field[:]
            message.field.extend(copies)
            sort(message.nested_type)

    sort(proto.message_type)
    if not proto.public_dependency and not proto.weak_dependency:
        dependencies = sorted(proto.dependency)
        del proto.dependency[:]
        proto.dependency.extend(dependencies)
    identity = FDP()
    identity.CopyFrom(proto)
    identity.ClearField("name")
    return ProtobufSchema(proto, schema.imports, base64.b64encode(identity.SerializeToString(
        deterministic=True)).decode(), render(proto))


def _from_base64(text: str) -> Any:
    """The FileDescriptorProto a base64 text holds, or None when the text is not one (then it is `.proto`)."""
    if not text or any(c.isspace() or c in ";{}\"" for c in text.strip()):
        return None
    try:
        proto = FDP.FromString(base64.b64decode(text.strip(), validate=True))
    except (binascii.Error, ValueError, Exception):  # protobuf's DecodeError too
        return None
    return proto if proto.message_type or proto.enum_type or proto.name else None


def _compile(text: str, referenced: dict[str, ProtobufSchema]) -> Any:
    """The `.proto` text compiled by protoc (grpcio-tools) with the referenced schemas as files beside it."""
    require("grpc_tools", "the Schema Registry's Protobuf text schemas")
    compiler = importlib.import_module("grpc_tools._protoc_compiler")
    well_known = importlib.resources.files("grpc_tools") / "_proto"
    with tempfile.TemporaryDirectory(prefix="mockbroker-proto-") as tmp:
        root = Path(tmp)
        files = {MAIN_FILE: text}
        for name, schema in referenced.items():
            files[name] = schema.text
            files.update({p.name: render(p) for p in schema.imports if not p.name.startswith("google/protobuf/")})
        for name, content in files.items():
            path = (root / name).resolve()
            if root not in path.parents:
                raise InvalidSchema(f"Invalid protobuf schema: reference name {name!r} is not a relative path")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
        try:
            generated = compiler.get_protos(MAIN_FILE.encode(), [str(root).encode(), str(well_known).encode()])
        except compiler.ProtocErrors as exc:
            errors = "; ".join(str(e) for e in exc.errors()) or str(exc)
            raise InvalidSchema(f"Invalid protobuf schema: {errors.replace(str(root) + '/', '')}") from None
    module = MAIN_FILE.removesuffix(".proto").encode() + b"_pb2.py"
    code = next(code for name, code in generated if name == module)
    return FDP.FromString(_serialized_file(code.decode()))


def _serialized_file(code: str) -> bytes:
    """The serialized FileDescriptorProto in protoc's generated Python (its AddSerializedFile argument)."""
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "AddSerializedFile":
            value = ast.literal_eval(node.args[0])
            if isinstance(value, bytes):
                return value
    raise InvalidSchema("Invalid protobuf schema: protoc gave no descriptor")


def _imports(proto: Any, referenced: dict[str, ProtobufSchema]) -> list[Any]:
    """The descriptors of everything `proto` imports, dependencies first: referenced schemas (renamed to their
    reference name) and the well-known types; InvalidSchema for an import nothing provides."""
    found: dict[str, Any] = {}

    def visit(p: Any) -> None:
        for dep in p.dependency:
            if dep in found:
                continue
            if dep in referenced:
                schema = referenced[dep]
                for inner in schema.imports:
                    found.setdefault(inner.name, inner)
                copy = FDP()
                copy.CopyFrom(schema.file)
                copy.name = dep
                found[dep] = copy
            elif dep.startswith("google/protobuf/"):
                found[dep] = _well_known(dep)
                visit(found[dep])
            else:
                raise InvalidSchema(f"Invalid protobuf schema: import {dep!r} is not among the references")

    visit(proto)
    return list(found.values())


def _well_known(name: str) -> Any:
    module_name = "google.protobuf." + name.removeprefix("google/protobuf/").removesuffix(".proto").replace(
        "/", ".") + "_pb2"
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        raise InvalidSchema(f"Invalid protobuf schema: unknown import {name!r}") from None
    proto = FDP()
    module.DESCRIPTOR.CopyToProto(proto)
    return proto


# -- rendering ---------------------------------------------------------------------------------------
def render(proto: Any) -> str:
    """The `.proto` text of a FileDescriptorProto: syntax, package, imports, scalar file options, messages
    (fields, maps, oneofs, nested types, reserved numbers and names) and enums."""
    lines = [f'syntax = "{proto.syntax or "proto2"}";']
    if proto.package:
        lines.append(f"package {proto.package};")
    public = set(proto.public_dependency)
    lines += [f'import {"public " if i in public else ""}"{dep}";' for i, dep in enumerate(proto.dependency)]
    for option, value in proto.options.ListFields():
        if option.type == F.TYPE_STRING:
            lines.append(f"option {option.name} = {_quote(value)};")
        elif option.type in (F.TYPE_BOOL, F.TYPE_ENUM):
            shown = str(value).lower() if option.type == F.TYPE_BOOL else option.enum_type.values_by_number[value].name
            lines.append(f"option {option.name} = {shown};")
    for message in proto.message_type:
        lines += _message(message, proto.syntax, "")
    for enum in proto.enum_type:
        lines += _enum(enum, "")
    return "\n".join(lines) + "\n"


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _message(message: Any, syntax: str, indent: str) -> list[str]:
    inner = indent + "  "
    entries = {n.name: n for n in message.nested_type if n.options.map_entry}
    lines = [f"{indent}message {message.name} {{"]
    real_oneofs = {f.oneof_index for f in message.field if f.HasField("oneof_index") and not f.proto3_optional}
    shown: set[int] = set()
    for f in message.field:  # in declaration order, a oneof where its first field is
        if not (f.HasField("oneof_index") and f.oneof_index in real_oneofs):
            lines.append(inner + _field(f, syntax, entries))
        elif f.oneof_index not in shown:
            shown.add(f.oneof_index)
            lines.append(f"{inner}oneof {message.oneof_decl[f.oneof_index].name} {{")
            lines += [inner + "  " + _field(g, "proto3", entries) for g in message.field
                      if g.HasField("oneof_index") and g.oneof_index == f.oneof_index]
            lines.append(inner + "}")
    for nested in message.nested_type:
        if not nested.options.map_entry:
            lines += _message(nested, syntax, inner)
    for enum in message.enum_type:
        lines += _enum(enum, inner)
    lines += _reserved(message, inner, exclusive_end=True)
    return lines + [indent + "}"]


def _field(f: Any, syntax: str, entries: dict[str, Any]) -> str:
    entry = entries.get(f.type_name.rsplit(".", 1)[-1]) if f.type == F.TYPE_MESSAGE else None
    if entry is not None and f.label == F.LABEL_REPEATED:
        key, value = entry.field[0], entry.field[1]
        kind = f"map<{_type(key)}, {_type(value)}>"
        label = ""
    else:
        kind = _type(f)
        label = {F.LABEL_REPEATED: "repeated ", F.LABEL_REQUIRED: "required "}.get(f.label, "")
        if f.label == F.LABEL_OPTIONAL and (syntax == "proto2" or f.proto3_optional):
            label = "optional "
    options = []
    if f.HasField("default_value"):
        options.append(f"default = {_quote(f.default_value) if f.type == F.TYPE_STRING else f.default_value}")
    if f.options.HasField("packed"):
        options.append(f"packed = {str(f.options.packed).lower()}")
    if f.options.deprecated:
        options.append("deprecated = true")
    shown = f" [{', '.join(options)}]" if options else ""
    return f"{label}{kind} {f.name} = {f.number}{shown};"


def _type(f: Any) -> str:
    return SCALARS.get(f.type) or f.type_name


def _enum(enum: Any, indent: str) -> list[str]:
    lines = [f"{indent}enum {enum.name} {{"]
    if enum.options.allow_alias:
        lines.append(f"{indent}  option allow_alias = true;")
    lines += [f"{indent}  {v.name} = {v.number};" for v in enum.value]
    lines += _reserved(enum, indent + "  ", exclusive_end=False)
    return lines + [indent + "}"]


def _reserved(kind: Any, indent: str, exclusive_end: bool) -> list[str]:
    """Reserved ranges (a message's ends are exclusive, an enum's inclusive) and names."""
    ranges = []
    for r in kind.reserved_range:
        end = r.end - 1 if exclusive_end else r.end
        ranges.append(str(r.start) if end == r.start else f"{r.start} to {'max' if end >= 536870911 else end}")
    lines = [f"{indent}reserved {', '.join(ranges)};"] if ranges else []
    if kind.reserved_name:
        lines.append(f"{indent}reserved {', '.join(_quote(n) for n in kind.reserved_name)};")
    return lines


# -- compatibility -------------------------------------------------------------------------------------
@dataclass
class _Types:
    """Every message and enum of a schema and its imports by full name (".pkg.Name"), with its package."""
    messages: dict[str, tuple[Any, str]] = field(default_factory=dict)
    enums: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, schema: ProtobufSchema) -> _Types:
        types = cls()
        for proto in [*schema.imports, schema.file]:
            prefix = f".{proto.package}" if proto.package else ""
            types.collect(proto.message_type, proto.enum_type, prefix, proto.package)
        return types

    def collect(self, messages: Any, enums: Any, prefix: str, package: str) -> None:
        for enum in enums:
            self.enums.add(f"{prefix}.{enum.name}")
        for message in messages:
            name = f"{prefix}.{message.name}"
            self.messages[name] = (message, package)
            self.collect(message.nested_type, message.enum_type, name, package)


@dataclass
class _Differ:
    original: _Types
    update: _Types
    found: list[Difference] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)  # full names of the original's messages compared

    def add(self, kind: str, path: str) -> None:
        self.found.append(Difference(kind, path, RULES))

    def compare_types(self, path: str, old: Any, new: Any, prefix: str) -> None:
        """Messages and enums of one scope (a file or a message, `prefix` its full name) by name."""
        olds, news = _messages(old), _messages(new)
        for name in sorted(set(olds) | set(news)):
            where = f"{path}{name}"
            if name not in news:
                self.add("MESSAGE_REMOVED", where)
            elif name not in olds:
                self.add("MESSAGE_ADDED", where)
            else:
                self.compare_message(where, olds[name][1], news[name][1], f"{prefix}.{name}")
                if olds[name][0] != news[name][0]:
                    self.add("MESSAGE_MOVED", where)
        oenums, uenums = {e.name: e for e in old.enum_type}, {e.name: e for e in new.enum_type}
        for name in sorted(set(oenums) | set(uenums)):
            where = f"{path}{name}"
            if name not in uenums:
                self.add("ENUM_REMOVED", where)
            elif name not in oenums:
                self.add("ENUM_ADDED", where)
            else:
                ovalues = {v.number: v.name for v in oenums[name].value}
                uvalues = {v.number: v.name for v in uenums[name].value}
                for number in sorted(set(ovalues) | set(uvalues)):
                    kind = "REMOVED" if number not in uvalues else "ADDED" if number not in ovalues else (
                        "CHANGED" if ovalues[number] != uvalues[number] else "")
                    if kind:
                        self.add(f"ENUM_CONST_{kind}", f"{where}/{number}")

    def compare_message(self, path: str, old: Any, new: Any, full_name: str) -> None:
        if full_name in self.seen:  # compared already (through a field of its type), or recursive
            return
        self.seen.add(full_name)
        oneof_of = [_real_oneofs(old), _real_oneofs(new)]
        oplain = {f.number: f for f in old.field if f.number not in oneof_of[0]}
        uplain = {f.number: f for f in new.field if f.number not in oneof_of[1]}
        oall, uall = {f.number: f for f in old.field}, {f.number: f for f in new.field}
        onames = {name for name in oneof_of[0].values()}
        for oneof in sorted(set(oneof_of[1].values())):
            tags = [n for n, o in oneof_of[1].items() if o == oneof]
            moved = sum(1 for t in tags if oplain.pop(t, None) is not None)
            existing = sum(1 for t in tags if t in oneof_of[0])
            if moved > 1:
                self.add("MULTIPLE_FIELDS_MOVED_TO_ONEOF", f"{path}/{oneof}")
            elif moved == 1 and existing:
                self.add("FIELD_MOVED_TO_EXISTING_ONEOF", f"{path}/{oneof}")
        unames = set(oneof_of[1].values())
        for oneof in sorted(onames | unames):
            where = f"{path}/{oneof}"
            if oneof not in unames:
                self.add("ONEOF_REMOVED", where)
            elif oneof not in onames:
                self.add("ONEOF_ADDED", where)
            else:
                otags = {n for n, o in oneof_of[0].items() if o == oneof}
                utags = {n for n, o in oneof_of[1].items() if o == oneof}
                for tag in sorted(otags | utags):
                    if tag not in utags:
                        self.add("ONEOF_FIELD_REMOVED", f"{where}/{tag}")
                    elif tag not in otags:
                        self.add("ONEOF_FIELD_ADDED", f"{where}/{tag}")
                    else:
                        self.compare_field(f"{where}/{tag}", oall[tag], uall[tag])
        for tag in sorted(set(oplain) | set(uplain)):
            where = f"{path}/{tag}"
            if tag not in uplain:
                self.add("REQUIRED_FIELD_REMOVED" if oplain[tag].label == F.LABEL_REQUIRED else "FIELD_REMOVED", where)
            elif tag not in oplain:
                self.add("REQUIRED_FIELD_ADDED" if uplain[tag].label == F.LABEL_REQUIRED else "FIELD_ADDED", where)
            else:
                self.compare_field(where, oplain[tag], uplain[tag])
        for tag in sorted(set(oall) & set(uall)):
            if (tag in oneof_of[0] or tag in oneof_of[1]) and oneof_of[0].get(tag) != oneof_of[1].get(tag):
                self.compare_field(f"{path}/{tag}", oall[tag], uall[tag])
        self.compare_types(f"{path}/", old, new, full_name)

    def compare_field(self, path: str, old: Any, new: Any) -> None:
        if old.name != new.name:
            self.add("FIELD_NAME_CHANGED", path)
        okind, ukind = self.kind(old, self.original), self.kind(new, self.update)
        if okind != ukind:
            return self.add("FIELD_KIND_CHANGED", path)
        if okind == "map":
            oentry, uentry = self.original.messages[old.type_name][0], self.update.messages[new.type_name][0]
            for i in (0, 1):
                self.compare_field(path, _named(oentry.field[i], old.name), _named(uentry.field[i], new.name))
            return
        orepeated, urepeated = old.label == F.LABEL_REPEATED, new.label == F.LABEL_REPEATED
        if orepeated != urepeated:
            text = okind == "message" or old.type in (F.TYPE_STRING, F.TYPE_BYTES)
            self.add("FIELD_STRING_OR_BYTES_LABEL_CHANGED" if text else "FIELD_NUMERIC_LABEL_CHANGED", path)
        if okind == "scalar":
            if self.group(old) != self.group(new):
                self.add("FIELD_SCALAR_KIND_CHANGED", path)
        elif okind == "message":
            self.compare_named(path, old.type_name, new.type_name)

    def compare_named(self, path: str, old_name: str, new_name: str) -> None:
        old, new = self.original.messages.get(old_name), self.update.messages.get(new_name)
        if old is None or new is None:
            if old_name != new_name:
                self.add("FIELD_NAMED_TYPE_CHANGED", path)
            return
        if _local(old_name, old[1]) != _local(new_name, new[1]):
            return self.add("FIELD_NAMED_TYPE_CHANGED", path)
        sub = _Differ(self.original, self.update, seen=self.seen)
        sub.compare_message(_local(old_name, old[1]), old[0], new[0], old_name)
        self.found += sub.found
        if not all(d.compatible for d in sub.found):
            self.add("FIELD_NAMED_TYPE_CHANGED", path)

    @staticmethod
    def kind(f: Any, types: _Types) -> str:
        if f.type == F.TYPE_MESSAGE:
            entry = types.messages.get(f.type_name)
            return "map" if entry is not None and entry[0].options.map_entry else "message"
        return "scalar"

    @staticmethod
    def group(f: Any) -> str:
        return GROUPS["enum" if f.type == F.TYPE_ENUM else SCALARS.get(f.type, "message")]


def _messages(scope: Any) -> dict[str, tuple[int, Any]]:
    """A file's or a message's messages by name, with their index (map entries left out)."""
    found = scope.message_type if isinstance(scope, FDP) else scope.nested_type
    return {m.name: (i, m) for i, m in enumerate(m for m in found if not m.options.map_entry)}


def _real_oneofs(message: Any) -> dict[int, str]:
    """Field number -> the oneof it belongs to (proto3 `optional`'s synthetic oneofs left out)."""
    return {f.number: message.oneof_decl[f.oneof_index].name for f in message.field
            if f.HasField("oneof_index") and not f.proto3_optional}


def _named(f: Any, name: str) -> Any:
    copy = F()
    copy.CopyFrom(f)
    copy.name = name
    return copy


def _local(full_name: str, package: str) -> str:
    prefix = f".{package}." if package else "."
    return full_name.removeprefix(prefix)


def differences(original: ProtobufSchema, update: ProtobufSchema) -> list[Difference]:
    """Every change from `original` to `update`, compatible ones too (see the module's docstring)."""
    differ = _Differ(_Types.of(original), _Types.of(update))
    if original.file.package != update.file.package:
        differ.add("PACKAGE_CHANGED", "#/")
    differ.compare_types("#/", original.file, update.file, f".{original.file.package}" if original.file.package
                         else "")
    return differ.found


def incompatibilities(reader: ProtobufSchema, writer: ProtobufSchema) -> list[Difference]:
    """The changes that keep `reader` from reading what `writer` wrote (Confluent: writer -> reader)."""
    return [d for d in differences(writer, reader) if not d.compatible]
