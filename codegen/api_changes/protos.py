"""What changed between two pins' envd protos, on the wire the SDK speaks (Connect's JSON codec).

Two FileDescriptorSets (protoc's, `codegen/envd/protos.py`) are compared as buf's WIRE_JSON
rules see them, plus what the issue adds (a message, RPC or service removed or renamed):
how docs/maintainers/bump.md, "The data plane's protos".
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from codegen.api_changes.report import ApiChange, ProtoChangeKind, sort_key
from codegen.api_changes.rules import PROTO_RULES

__all__ = ["ProtoSchema", "compare_protos", "index_protos"]

_MAP = "map"
# Far above the depth of envd's messages (3): see `_renames`.
_RENAME_ROUNDS = 64


@dataclass(frozen=True)
class _Field:
    name: str
    number: int
    json_name: str
    type: str  # "int32", "filesystem.EntryInfo", "map<string, string>"
    cardinality: str  # singular, optional, repeated, required, map
    oneof: str | None  # the real oneof's name (proto3 `optional`'s synthetic one is cardinality)
    options: bytes


@dataclass(frozen=True)
class _Message:
    fields: Mapping[int, _Field]
    options: bytes


@dataclass(frozen=True)
class _Enum:
    values: Mapping[str, int]  # name -> number: JSON writes the name, the binary encoding the number
    options: bytes


@dataclass(frozen=True)
class _Method:
    input: str
    output: str
    streaming: str  # unary, client, server, bidi
    options: bytes


@dataclass(frozen=True)
class _Service:
    methods: Mapping[str, _Method]
    options: bytes


@dataclass(frozen=True)
class ProtoSchema:
    """What the wire depends on in a set of protos, by full name (`filesystem.EntryInfo`)."""

    messages: Mapping[str, _Message] = field(default_factory=dict)
    enums: Mapping[str, _Enum] = field(default_factory=dict)
    services: Mapping[str, _Service] = field(default_factory=dict)


def index_protos(descriptors: Any, files: Iterable[str]) -> ProtoSchema:
    """The declarations of `files` (names as protoc gives them, `process/process.proto`) in a FileDescriptorSet.

    The well-known types it includes are referred to, not compared: the same protoc ships both sides.
    """
    wanted = frozenset(files)
    map_entries: dict[str, tuple[str, str]] = {}
    for file in descriptors.file:
        for name, message in _messages(file.package, file.message_type):
            if message.options.map_entry:
                key, value = sorted(message.field, key=lambda f: f.number)[:2]
                map_entries[name] = (_type_of(key), _type_of(value))
    messages: dict[str, _Message] = {}
    enums: dict[str, _Enum] = {}
    services: dict[str, _Service] = {}
    for file in descriptors.file:
        if file.name not in wanted:
            continue
        proto3 = file.syntax == "proto3"
        for name, message in _messages(file.package, file.message_type):
            if message.options.map_entry:
                continue
            fields = {f.number: _field(f, message, proto3, map_entries) for f in message.field}
            messages[name] = _Message(fields, message.options.SerializeToString(deterministic=True))
            for enum in message.enum_type:
                enums[f"{name}.{enum.name}"] = _enum(enum)
        for enum in file.enum_type:
            enums[_qualified(file.package, enum.name)] = _enum(enum)
        for service in file.service:
            methods = {m.name: _method(m) for m in service.method}
            services[_qualified(file.package, service.name)] = _Service(
                methods, service.options.SerializeToString(deterministic=True)
            )
    return ProtoSchema(messages, enums, services)


def _qualified(package: str, name: str) -> str:
    return f"{package}.{name}" if package else name


def _messages(prefix: str, declared: Iterable[Any]) -> Iterable[tuple[str, Any]]:
    for message in declared:
        name = _qualified(prefix, message.name)
        yield name, message
        yield from _messages(name, message.nested_type)


def _type_of(descriptor: Any) -> str:
    if descriptor.type_name:
        return str(descriptor.type_name).lstrip(".")
    return str(descriptor.Type.Name(descriptor.type)).removeprefix("TYPE_").lower()  # TYPE_INT64 -> int64


def _field(descriptor: Any, message: Any, proto3: bool, map_entries: Mapping[str, tuple[str, str]]) -> _Field:
    kind = _type_of(descriptor)
    repeated = descriptor.label == descriptor.LABEL_REPEATED
    if repeated and kind in map_entries:
        cardinality, kind = _MAP, "map<{}, {}>".format(*map_entries[kind])
    elif repeated:
        cardinality = "repeated"
    elif descriptor.label == descriptor.LABEL_REQUIRED:
        cardinality = "required"
    elif descriptor.proto3_optional or not proto3:
        cardinality = "optional"
    else:
        cardinality = "singular"
    in_oneof = descriptor.HasField("oneof_index") and not descriptor.proto3_optional
    return _Field(
        name=descriptor.name,
        number=descriptor.number,
        json_name=descriptor.json_name or descriptor.name,
        type=kind,
        cardinality=cardinality,
        oneof=message.oneof_decl[descriptor.oneof_index].name if in_oneof else None,
        options=descriptor.options.SerializeToString(deterministic=True),
    )


def _enum(descriptor: Any) -> _Enum:
    return _Enum({v.name: v.number for v in descriptor.value}, descriptor.options.SerializeToString(deterministic=True))


def _method(descriptor: Any) -> _Method:
    client, server = descriptor.client_streaming, descriptor.server_streaming
    streaming = "bidi" if client and server else "client" if client else "server" if server else "unary"
    return _Method(
        input=descriptor.input_type.lstrip("."),
        output=descriptor.output_type.lstrip("."),
        streaming=streaming,
        options=descriptor.options.SerializeToString(deterministic=True),
    )


def compare_protos(old: ProtoSchema, new: ProtoSchema) -> tuple[ApiChange, ...]:
    """Every change from `old` to `new`, most severe first, each graded by `PROTO_RULES`."""
    comparer = _Comparer(old, new)
    comparer.services()  # first: what an added service or RPC brings is said with it, not again
    comparer.messages()
    comparer.enums()
    return tuple(sorted(set(comparer.changes), key=sort_key))


class _Comparer:
    def __init__(self, old: ProtoSchema, new: ProtoSchema) -> None:
        self.old, self.new = old, new
        self.changes: list[ApiChange] = []
        # Old full name -> new, for messages and enums renamed with the same wire shape: neither
        # encoding writes a message's or an enum's name, so what refers to them has not changed.
        self.renamed: dict[str, str] = _renames(old, new)
        kept = {self.renamed.get(name, name) for name in (*old.messages, *old.enums)}
        self.added_types = (new.messages.keys() | new.enums.keys()) - kept
        self.brought: set[str] = set()  # added types an added service or RPC uses: said with it

    def bring(self, methods: Iterable[_Method]) -> str:
        """The added messages and enums `methods` use, through one another: folded into their line's detail."""
        found: set[str] = set()
        stack = [name for m in methods for name in (m.input, m.output)]
        while stack:
            name = stack.pop()
            if name in found or name not in self.added_types:
                continue
            found.add(name)
            message = self.new.messages.get(name)
            for f in message.fields.values() if message is not None else ():
                stack += f.type[4:-1].split(", ") if f.type.startswith("map<") else [f.type]
        found |= {n for n in self.added_types for parent in found if n.startswith(parent + ".")}
        self.brought |= found
        return f"{len(found)} new message(s) and enum(s)" if found else ""

    def add(self, kind: ProtoChangeKind, location: str, detail: str = "") -> None:
        level, why = PROTO_RULES[kind]
        self.changes.append(ApiChange(level, kind, location, detail, why))

    def same(self, old_type: str) -> str:
        """An old type name as the new side calls it."""
        return _renamed_type(old_type, self.renamed)

    def messages(self) -> None:
        matched = set()
        for name, old_message in sorted(self.old.messages.items()):
            now = self.renamed.get(name, name)
            new_message = self.new.messages.get(now)
            if new_message is None:
                self.add("message removed", name)
                continue
            matched.add(now)
            if now != name:
                self.add("message renamed", name, f"now {now}")
            self.fields(now, old_message, new_message)
            if old_message.options != new_message.options:
                self.add("options changed", now, "message options")
        for name in sorted(self.new.messages.keys() - matched - self.brought):
            self.add("message added", name)

    def fields(self, message: str, old: _Message, new: _Message) -> None:
        new_by_name = {f.name: f for f in new.fields.values()}
        old_names = {f.name for f in old.fields.values()}
        for number, before in sorted(old.fields.items()):
            after = new.fields.get(number)
            if after is None:
                moved = new_by_name.get(before.name)
                if moved is not None and moved.number not in old.fields:
                    self.add("field number changed", f"{message}.{before.name}", f"{number} -> {moved.number}")
                else:
                    self.add("field removed", f"{message}.{before.name} ({number})")
                continue
            where = f"{message}.{after.name} ({number})"
            if before.name != after.name:
                self.add("field renamed", f"{message}.{before.name} ({number})", f"now {after.name}")
            elif before.json_name != after.json_name:
                self.add("JSON name changed", where, f"{before.json_name} -> {after.json_name}")
            if self.same(before.type) != after.type:
                self.add("field type changed", where, f"{before.type} -> {after.type}")
            if before.cardinality != after.cardinality:
                self.add("cardinality changed", where, f"{before.cardinality} -> {after.cardinality}")
            if before.oneof != after.oneof:
                self.add("oneof changed", where, f"{_oneof(before.oneof)} -> {_oneof(after.oneof)}")
            if before.options != after.options:
                self.add("options changed", where, "field options")
        for number, after in sorted(new.fields.items()):
            if number not in old.fields and (after.name not in old_names or _number_of(old, after.name) in new.fields):
                self.add("field added", f"{message}.{after.name} ({number})")

    def enums(self) -> None:
        matched = set()
        for name, old_enum in sorted(self.old.enums.items()):
            now = self.renamed.get(name, name)
            new_enum = self.new.enums.get(now)
            if new_enum is None:
                self.add("enum removed", name)
                continue
            matched.add(now)
            if now != name:
                self.add("enum renamed", name, f"now {now}")
            self.enum_values(now, old_enum, new_enum)
            if old_enum.options != new_enum.options:
                self.add("options changed", now, "enum options")
        for name in sorted(self.new.enums.keys() - matched - self.brought):
            self.add("enum added", name)

    def enum_values(self, enum: str, old: _Enum, new: _Enum) -> None:
        new_names_by_number: dict[int, list[str]] = {}
        for value, number in new.values.items():
            new_names_by_number.setdefault(number, []).append(value)
        taken: set[str] = set()
        for value, number in sorted(old.values.items(), key=lambda item: (item[1], item[0])):
            if value in new.values:
                if new.values[value] != number:
                    self.add("enum value number changed", f"{enum}.{value}", f"{number} -> {new.values[value]}")
                continue
            successors = [n for n in new_names_by_number.get(number, []) if n not in old.values and n not in taken]
            if successors:
                taken.add(successors[0])
                self.add("enum value renamed", f"{enum}.{value} ({number})", f"now {successors[0]}")
            else:
                self.add("enum value removed", f"{enum}.{value} ({number})")
        for value, number in sorted(new.values.items(), key=lambda item: (item[1], item[0])):
            if value not in old.values and value not in taken:
                self.add("enum value added", f"{enum}.{value} ({number})")

    def services(self) -> None:
        service_renames = _service_renames(self.old, self.new, self.renamed)
        matched = set()
        for name, old_service in sorted(self.old.services.items()):
            now = service_renames.get(name, name)
            new_service = self.new.services.get(now)
            if new_service is None:
                self.add("service removed", name)
                continue
            matched.add(now)
            if now != name:
                self.add("service renamed", name, f"now {now}")
            self.methods(now, old_service, new_service)
            if old_service.options != new_service.options:
                self.add("options changed", now, "service options")
        for name in sorted(self.new.services.keys() - matched):
            methods = self.new.services[name].methods
            brought = self.bring(methods.values())
            self.add("service added", name, ", ".join(filter(None, [f"{len(methods)} RPC(s)", brought])))

    def methods(self, service: str, old: _Service, new: _Service) -> None:
        gone = sorted(old.methods.keys() - new.methods.keys())
        fresh = sorted(new.methods.keys() - old.methods.keys())
        renames = _unique_matches(
            {n: self.signature(old.methods[n]) for n in gone}, {n: _signature(new.methods[n]) for n in fresh}
        )
        for name in gone:
            if name in renames:
                self.add("RPC renamed", f"{service}/{name}", f"now {renames[name]}")
            else:
                self.add("RPC removed", f"{service}/{name}")
        for name in fresh:
            if name not in renames.values():
                self.add("RPC added", f"{service}/{name}", self.bring([new.methods[name]]))
        for name in sorted(old.methods.keys() & new.methods.keys()):
            before, after, where = old.methods[name], new.methods[name], f"{service}/{name}"
            if before.streaming != after.streaming:
                self.add("streaming kind changed", where, f"{before.streaming} -> {after.streaming}")
            if self.same(before.input) != after.input:
                self.add("request type changed", where, f"{before.input} -> {after.input}")
            if self.same(before.output) != after.output:
                self.add("response type changed", where, f"{before.output} -> {after.output}")
            if before.options != after.options:
                self.add("options changed", where, "RPC options")

    def signature(self, method: _Method) -> tuple[str, str, str]:
        return (self.same(method.input), self.same(method.output), method.streaming)


def _signature(method: _Method) -> tuple[str, str, str]:
    return (method.input, method.output, method.streaming)


def _oneof(name: str | None) -> str:
    return f"oneof {name}" if name else "no oneof"


def _number_of(message: _Message, name: str) -> int | None:
    return next((f.number for f in message.fields.values() if f.name == name), None)


def _unique_matches(old: Mapping[str, Hashable], new: Mapping[str, Hashable]) -> dict[str, str]:
    """Old name -> new name where exactly one of each side has the shape: a rename, not a guess among several.

    Grouped by shape, so that a round costs time in proportion to the declarations, not their square.
    """
    old_by_shape: dict[Hashable, list[str]] = {}
    new_by_shape: dict[Hashable, list[str]] = {}
    for names, side in ((old_by_shape, old), (new_by_shape, new)):
        for name, shape in side.items():
            names.setdefault(shape, []).append(name)
    return {
        olds[0]: news[0]
        for shape, olds in old_by_shape.items()
        if len(olds) == 1 and len(news := new_by_shape.get(shape, [])) == 1
    }


def _renames(old: ProtoSchema, new: ProtoSchema) -> dict[str, str]:
    """Messages and enums that left one name for another with the same wire shape.

    A shape names the types its fields refer to, which may be renamed too (a package renamed
    renames every message): found again with each round's renames until none is added, for at
    most `_RENAME_ROUNDS` rounds (a chain of renamed messages each using the next is longer only in
    a hostile proto; what is left counts as removed and added, the stricter reading).
    """
    renamed = _unique_matches(
        {n: _enum_shape(e) for n, e in old.enums.items() if n not in new.enums},
        {n: _enum_shape(e) for n, e in new.enums.items() if n not in old.enums},
    )
    gone = {n: m for n, m in old.messages.items() if n not in new.messages}
    fresh = {n: _message_shape(m, {}) for n, m in new.messages.items() if n not in old.messages}
    for _ in range(_RENAME_ROUNDS):
        taken = set(renamed.values())
        found = _unique_matches(
            {n: _message_shape(m, renamed) for n, m in gone.items() if n not in renamed},
            {n: shape for n, shape in fresh.items() if n not in taken},
        )
        if not found:
            break
        renamed.update(found)
    return renamed


def _enum_shape(enum: _Enum) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(enum.values.items()))


def _message_shape(message: _Message, renamed: Mapping[str, str]) -> tuple[tuple[Any, ...], ...]:
    """What the wire depends on in a message, the types it uses called by their new names."""
    return tuple(
        (f.number, f.name, f.json_name, _renamed_type(f.type, renamed), f.cardinality, f.oneof)
        for _, f in sorted(message.fields.items())
    )


def _renamed_type(kind: str, renamed: Mapping[str, str]) -> str:
    """A type as the new side calls it (a map's key and value types included)."""
    if kind.startswith("map<"):
        key, value = kind[4:-1].split(", ")
        return f"map<{_renamed_type(key, renamed)}, {_renamed_type(value, renamed)}>"
    return renamed.get(kind, kind)


def _service_renames(old: ProtoSchema, new: ProtoSchema, renamed: Mapping[str, str]) -> dict[str, str]:
    """A service that left one name for another with the same RPCs (Connect's URLs change: still major)."""

    def shape(service: _Service, names: Mapping[str, str]) -> tuple[tuple[str, str, str, str], ...]:
        return tuple(
            (n, _renamed_type(m.input, names), _renamed_type(m.output, names), m.streaming)
            for n, m in sorted(service.methods.items())
        )

    return _unique_matches(
        {n: shape(s, renamed) for n, s in old.services.items() if n not in new.services},
        {n: shape(s, {}) for n, s in new.services.items() if n not in old.services},
    )
