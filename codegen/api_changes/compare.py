"""What changed between two OpenAPI specs, as seen by users of the Python SDK.

How it works, and why: docs/maintainers/design.md, "codegen/api_changes/compare.py".
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from codegen.api_changes.generated_names import GeneratedNames, client_surfaces_response_headers, generated_names
from codegen.api_changes.report import (
    LEVELS,
    ApiChange,
    ApiChangeReport,
    ChangeKind,
    Level,
    Variant,
    render_report,
    sort_key,
)
from codegen.api_changes.rules import (
    RULES,
    WHY_ERROR_CODE_REMOVED,
    WHY_ERROR_RESPONSE_REMOVED,
    WHY_HEADER_NOT_SURFACED,
    WHY_MODEL_REMOVED,
    WHY_MODEL_RENAMED,
    WHY_OPERATION_MOVED,
    WHY_OPERATION_RENAMED,
    WHY_OTHER_CREDENTIAL,
    WHY_RESPONSE_ENUM_VALUE_ADDED,
    WHY_RESPONSE_ENUM_VALUE_REMOVED,
    WHY_RESPONSE_MADE_NULLABLE,
    WHY_RESPONSE_MADE_OPTIONAL,
    WHY_SDK_CREDENTIAL_REFUSED,
    WHY_SECURITY,
    WHY_UPSTREAM_RENAME,
    WHY_VALIDATION_CHANGED_REQUEST,
    WHY_VALIDATION_CHANGED_RESPONSE,
    WHY_VALIDATION_LOOSENED_RESPONSE,
    WHY_VALIDATION_TIGHTENED_RESPONSE,
    Side,
    rules_markdown,
)
from codegen.api_changes.security import (
    alternatives_text,
    now_text,
    scheme_identity,
    scheme_key,
    security_alternatives,
)
from codegen.api_changes.texts import count_text_changes, single_spaced, without_schemes, without_text
from codegen.api_changes.validation import compare_validation
from codegen.openapi.error_codes import documented_error_codes
from codegen.openapi.json_pointer import PointerSyntaxError, resolve_pointer
from codegen.openapi.operation_map import UPSTREAM_OPERATION_ID
from codegen.openapi.operations import HTTP_METHODS
from codegen.openapi.schema_places import Budget

if TYPE_CHECKING:
    from toolkit.records import Records

__all__ = [
    "LEVELS",
    "RULES",
    "WHY_ERROR_CODE_REMOVED",
    "WHY_ERROR_RESPONSE_REMOVED",
    "WHY_HEADER_NOT_SURFACED",
    "WHY_MODEL_REMOVED",
    "WHY_MODEL_RENAMED",
    "WHY_OPERATION_MOVED",
    "WHY_OPERATION_RENAMED",
    "WHY_OTHER_CREDENTIAL",
    "WHY_RESPONSE_ENUM_VALUE_ADDED",
    "WHY_RESPONSE_ENUM_VALUE_REMOVED",
    "WHY_RESPONSE_MADE_NULLABLE",
    "WHY_RESPONSE_MADE_OPTIONAL",
    "WHY_SDK_CREDENTIAL_REFUSED",
    "WHY_SECURITY",
    "WHY_UPSTREAM_RENAME",
    "WHY_VALIDATION_CHANGED_REQUEST",
    "WHY_VALIDATION_CHANGED_RESPONSE",
    "WHY_VALIDATION_LOOSENED_RESPONSE",
    "WHY_VALIDATION_TIGHTENED_RESPONSE",
    "ApiChange",
    "ApiChangeReport",
    "ChangeKind",
    "Level",
    "Variant",
    "client_surfaces_response_headers",
    "compare_specs",
    "render_report",
    "rules_markdown",
]

# Formats that openapi-python-client maps to their own Python type; others
# (int32/int64, email, ...) stay str/int, so changing them changes nothing.
_TYPED_FORMATS = frozenset({"date", "date-time", "uuid", "binary"})


def compare_specs(
    old: dict[str, Any],
    new: dict[str, Any],
    *,
    credentials: Collection[str] | None = None,
    surfaced_headers: bool | None = None,
    records: Records | None = None,
) -> ApiChangeReport:
    """Compare two filtered specs; operations are matched by (METHOD, path).

    `credentials`: the security schemes the SDK sends, all at once (spec/contract.yml's `credential`
    entries); None when the contract names none: then every way a caller authenticated counts.
    `surfaced_headers`: whether the generated client surfaces documented response headers (default:
    what `client_surfaces_response_headers` finds in the generator). `records`: where the generator's
    parser's answers are remembered (`parser_records`), None to parse every time.
    """
    if surfaced_headers is None:
        surfaced_headers = client_surfaces_response_headers(records)
    comparer = _Comparer(old, new, credentials=credentials, surfaced_headers=surfaced_headers, records=records)
    comparer.operations()
    comparer.removed_models()
    comparer.error_codes()
    comparer.security_notes()
    descriptions = (
        count_text_changes(without_schemes(old), without_schemes(new))
        + comparer.scheme_texts()
        + comparer.error_code_texts
        + comparer.header_texts
    )
    return ApiChangeReport(
        changes=tuple(sorted(set(comparer.changes), key=sort_key)),
        description_changes=descriptions,
    )


# --- spec navigation ---------------------------------------------------------


# One shared empty mapping: the cycle guard keys on node identity, and a fresh
# `{}` per call could reuse a freed object's id.
_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _as_mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else _EMPTY


def _resolve(doc: Mapping[str, Any], node: object) -> tuple[Mapping[str, Any], str | None]:
    """Follow local $refs; return the target and the name of the last ref."""
    name: str | None = None
    seen: set[str] = set()
    while isinstance(node, Mapping) and isinstance(node.get("$ref"), str):
        ref: str = node["$ref"]
        if ref in seen or not ref.startswith("#/"):
            return _EMPTY, name
        seen.add(ref)
        name = ref.rsplit("/", 1)[-1]
        try:
            _, node = resolve_pointer(doc, ref[1:])
        except PointerSyntaxError:
            return _EMPTY, name
    return _as_mapping(node), name


def _flatten(
    doc: Mapping[str, Any], node: object, busy: frozenset[int] = frozenset()
) -> tuple[Mapping[str, Any], str | None, int]:
    """Resolve a schema and merge its allOf parts.

    Returns the schema, the component name that names its model class, and the
    identity of the spec node it came from (merged dicts are new objects, so the
    cycle guard needs the original's id).
    """
    schema, name = _resolve(doc, node)
    key = id(schema)
    parts = schema.get("allOf")
    if not isinstance(parts, list) or key in busy:
        return schema, name, key
    merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
    properties: dict[str, Any] = dict(_as_mapping(merged.get("properties")))
    required: list[Any] = list(merged.get("required") or [])
    for part in parts:
        sub, sub_name, _ = _flatten(doc, part, busy | {key})
        # `allOf: [$ref: X]` plus `nullable` is how 3.0 spells "X or null": the
        # generated class is still X.
        if name is None and len(parts) == 1:
            name = sub_name
        properties.update(_as_mapping(sub.get("properties")))
        required.extend(sub.get("required") or [])
        for k, v in sub.items():
            merged.setdefault(k, v)
    if properties:
        merged["properties"] = properties
    merged["required"] = required
    return merged, name, key


def _type_of(schema: Mapping[str, Any], doc: Mapping[str, Any]) -> str:
    """The shape that decides the generated Python type."""
    for union in ("oneOf", "anyOf"):
        variants = schema.get(union)
        if isinstance(variants, list):
            names = []
            for variant in variants:
                target, ref_name = _resolve(doc, variant)
                names.append(ref_name or _type_of(target, doc))
            return f"{union}[{' | '.join(sorted(names))}]"
    kind = schema.get("type")
    if not isinstance(kind, str):
        if "properties" in schema:
            kind = "object"
        elif "additionalProperties" in schema:
            kind = "map"
        elif "items" in schema:
            kind = "array"
        else:
            kind = "any"
    elif kind == "object" and "properties" not in schema and "additionalProperties" in schema:
        kind = "map"
    fmt = schema.get("format")
    if fmt in _TYPED_FORMATS:
        kind = f"{kind}({fmt})"
    return f"{kind} enum" if "enum" in schema else kind


def _enum_values(schema: Mapping[str, Any]) -> dict[str, object]:
    values = schema.get("enum")
    if not isinstance(values, list):
        return {}
    return {json.dumps(v, sort_keys=True): v for v in values}


def _media_schema(content: object) -> tuple[str | None, object]:
    media = _as_mapping(content)
    if not media:
        return None, None
    chosen = "application/json" if "application/json" in media else sorted(media)[0]
    return chosen, _as_mapping(media[chosen]).get("schema")


def _path_key(path: str) -> str:
    # Renaming a path parameter must not look like a removed operation plus a
    # new one: the parameter diff reports it.
    return re.sub(r"\{[^}]*\}", "{}", path)


def _codes(responses: object) -> dict[str, Any]:
    # An unquoted 200 in YAML is an int; the other spec may quote it.
    return {str(code): response for code, response in _as_mapping(responses).items()}


def _endpoint(name: str, method: str, path: str) -> str:
    endpoint = f"{method} {path}"
    return "" if name == endpoint else endpoint


def _join(base: str, path: str) -> str:
    return f"{base} {path}" if path else base


# --- the comparison ----------------------------------------------------------


class _Comparer:
    def __init__(
        self,
        old: dict[str, Any],
        new: dict[str, Any],
        *,
        credentials: Collection[str] | None = None,
        surfaced_headers: bool = True,
        records: Records | None = None,
    ) -> None:
        self.old = old
        self.new = new
        self.changes: list[ApiChange] = []
        self.error_code_texts = 0
        self.credentials = frozenset(credentials) if credentials is not None else None
        self.surfaced_headers = surfaced_headers
        self.header_texts = 0  # changes to headers the client does not surface: documentation
        # Security changes no SDK caller sees, gathered over the operations: (kind, variant, subject, detail) -> ops.
        self.unseen_security: dict[tuple[ChangeKind, Variant, str, str], set[str]] = {}
        self.old_names = generated_names(old, _path_key, records=records)
        self.new_names = generated_names(new, _path_key, records=records)
        self.renamed_classes: set[str] = set()
        self.budget = Budget()  # the walk below the operations visits paths: bounded like reading the spec
        # The operation being compared: its (METHOD, path key), and the name its locations start with.
        self.current: tuple[tuple[str, str], str] = (("", ""), "")

    def add(self, kind: ChangeKind, side: Side, location: str, detail: str = "", *, variant: Variant = None) -> None:
        level, why = RULES[(kind, variant, side)]
        self.changes.append(ApiChange(level, kind, location, detail, why))

    def _operations_of(
        self, doc: Mapping[str, Any]
    ) -> dict[tuple[str, str], tuple[str, Mapping[str, Any], Mapping[str, Any]]]:
        found: dict[tuple[str, str], tuple[str, Mapping[str, Any], Mapping[str, Any]]] = {}
        for path, raw_item in _as_mapping(doc.get("paths")).items():
            item, _ = _resolve(doc, raw_item)
            for method in HTTP_METHODS:
                if isinstance(item.get(method), Mapping):
                    found[(method.upper(), _path_key(path))] = (path, item, item[method])
        return found

    def operations(self) -> None:
        old_ops, new_ops = self._operations_of(self.old), self._operations_of(self.new)
        for key in sorted(old_ops.keys() | new_ops.keys()):
            method = key[0]
            if key not in new_ops:
                path, _, op = old_ops[key]
                name = op.get("operationId") or f"{method} {path}"
                self.add("operation removed", None, name, _endpoint(name, method, path))
                continue
            path, new_item, new_op = new_ops[key]
            name = new_op.get("operationId") or f"{method} {path}"
            if key not in old_ops:
                self.add("operation added", None, name, _endpoint(name, method, path))
                continue
            _, old_item, old_op = old_ops[key]
            self.current = (key, name)
            self.operation(name, f"{method} {path}", (old_item, old_op), (new_item, new_op))

    def operation(
        self,
        name: str,
        endpoint: str,
        old: tuple[Mapping[str, Any], Mapping[str, Any]],
        new: tuple[Mapping[str, Any], Mapping[str, Any]],
    ) -> None:
        (old_item, old_op), (new_item, new_op) = old, new
        old_id, new_id = old_op.get("operationId"), new_op.get("operationId")
        old_upstream, new_upstream = old_op.get(UPSTREAM_OPERATION_ID), new_op.get(UPSTREAM_OPERATION_ID)
        if old_upstream != new_upstream:
            detail = f"{old_upstream or '(none)'} -> {new_upstream or '(none)'}"
            self.add("upstream operationId renamed", None, name, detail)
        if old_id != new_id:
            self.add("operation renamed", None, name, f"{old_id or '(none)'} -> {new_id or '(none)'}")
        old_tag = (old_op.get("tags") or [None])[0]
        new_tag = (new_op.get("tags") or [None])[0]
        if old_tag != new_tag:
            self.add("operation moved", None, name, f"tag {old_tag} -> {new_tag}")
        if new_op.get("deprecated") and not old_op.get("deprecated"):
            self.add("operation deprecated", None, name, endpoint)
        elif old_op.get("deprecated") and not new_op.get("deprecated"):
            self.add("operation no longer deprecated", None, name, endpoint)
        self.parameters(name, self._params(self.old, old_item, old_op), self._params(self.new, new_item, new_op))
        self.request_body(name, old_op.get("requestBody"), new_op.get("requestBody"))
        self.responses(name, _codes(old_op.get("responses")), _codes(new_op.get("responses")))
        self.security(name, old_op, new_op)

    @staticmethod
    def _params(
        doc: Mapping[str, Any], item: Mapping[str, Any], op: Mapping[str, Any]
    ) -> dict[tuple[str, str], Mapping[str, Any]]:
        found: dict[tuple[str, str], Mapping[str, Any]] = {}
        # Operation-level parameters override path-level ones with the same key.
        for raw in [*(item.get("parameters") or []), *(op.get("parameters") or [])]:
            param, _ = _resolve(doc, raw)
            if isinstance(param.get("in"), str) and isinstance(param.get("name"), str):
                found[(param["in"], param["name"])] = param
        return found

    def parameters(
        self,
        op: str,
        old: Mapping[tuple[str, str], Mapping[str, Any]],
        new: Mapping[tuple[str, str], Mapping[str, Any]],
    ) -> None:
        for key in sorted(old.keys() | new.keys()):
            where = f"{op} {key[0]} parameter {key[1]}"
            if key not in new:
                self.add("parameter removed", "request", where)
                continue
            required = bool(new[key].get("required"))
            if key not in old:
                variant: Literal["required", "optional"] = "required" if required else "optional"
                self.add("parameter added", "request", where, variant, variant=variant)
                continue
            was_required = bool(old[key].get("required"))
            if required and not was_required:
                self.add("made required", "request", where)
            elif was_required and not required:
                self.add("made optional", "request", where)
            if new[key].get("deprecated") and not old[key].get("deprecated"):
                self.add("deprecated", "request", where)
            old_schema = old[key].get("schema", _media_schema(old[key].get("content"))[1])
            new_schema = new[key].get("schema", _media_schema(new[key].get("content"))[1])
            self.schema(old_schema, new_schema, where, "", "request", frozenset())

    def request_body(self, op: str, old_raw: object, new_raw: object) -> None:
        where = f"{op} request body"
        if old_raw is None and new_raw is None:
            return
        old, _ = _resolve(self.old, old_raw)
        new, _ = _resolve(self.new, new_raw)
        if new_raw is None:
            self.add("request body removed", "request", where)
            return
        if old_raw is None:
            variant: Literal["required", "optional"] = "required" if new.get("required") else "optional"
            self.add("request body added", "request", where, variant, variant=variant)
            return
        if new.get("required") and not old.get("required"):
            self.add("request body made required", "request", where)
        elif old.get("required") and not new.get("required"):
            self.add("request body made optional", "request", where)
        self.body(old.get("content"), new.get("content"), where, "request")

    def body(self, old_content: object, new_content: object, where: str, side: Side) -> None:
        old_type, old_schema = _media_schema(old_content)
        new_type, new_schema = _media_schema(new_content)
        if old_type != new_type:
            self.add("type changed", side, where, f"content {old_type} -> {new_type}")
        elif old_schema is not None or new_schema is not None:
            self.schema(old_schema, new_schema, where, "", side, frozenset())

    def responses(self, op: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        for code in sorted(old.keys() | new.keys()):
            where = f"{op} {code} response"
            status: Variant = "2xx" if code.startswith("2") else "other"
            if code not in new:
                self.add("response code removed", "response", where, variant=status)
                continue
            if code not in old:
                self.add("response code added", "response", where)
                continue
            old_response, new_response = _resolve(self.old, old[code])[0], _resolve(self.new, new[code])[0]
            self.headers(where, _as_mapping(old_response.get("headers")), _as_mapping(new_response.get("headers")))
            old_content, new_content = old_response.get("content"), new_response.get("content")
            if old_content and not new_content:
                self.add("response body removed", "response", where, variant=status)
            elif new_content and not old_content:
                self.add("response body added", "response", where)
            elif old_content and new_content:
                self.body(old_content, new_content, where, "response")

    def schema(
        self,
        old_node: object,
        new_node: object,
        base: str,
        path: str,
        side: Side,
        stack: frozenset[tuple[int, int]],
    ) -> None:
        self.budget.spend(base)
        old, old_name, old_key = _flatten(self.old, old_node)
        new, new_name, new_key = _flatten(self.new, new_node)
        # A $ref cycle revisits the same pair of spec nodes; stop there, every
        # difference below it has been seen on the way in.
        if (old_key, new_key) in stack:
            return
        stack = stack | {(old_key, new_key)}
        where = _join(base, path)
        old_type, new_type = _type_of(old, self.old), _type_of(new, self.new)
        if old_type != new_type:
            self.add("type changed", side, where, f"{old_type} -> {new_type}")
            return
        old_class, new_class = self.generated_class(where, old_name, new_name)
        if old_class and new_class and old_class != new_class:
            self.renamed_classes.add(old_class)
            self.add("model renamed", side, where, f"{old_class} -> {new_class}")
        self.nullability(bool(old.get("nullable")), bool(new.get("nullable")), where, side)
        self.enum(_enum_values(old), _enum_values(new), where, side)
        for verdict, detail in compare_validation(old, new):
            self.add(verdict, side, where, detail)
        old_props, new_props = _as_mapping(old.get("properties")), _as_mapping(new.get("properties"))
        old_req, new_req = set(old.get("required") or []), set(new.get("required") or [])
        for prop in sorted(old_props.keys() | new_props.keys()):
            sub = f"{path}.{prop}"
            self.property(prop, old_props, new_props, (old_req, new_req), _join(base, sub), side)
            if prop in old_props and prop in new_props:
                self.schema(old_props[prop], new_props[prop], base, sub, side, stack)
        for key, suffix in (("items", "[]"), ("additionalProperties", "{*}")):
            if isinstance(old.get(key), Mapping) and isinstance(new.get(key), Mapping):
                self.schema(old[key], new[key], base, path + suffix, side, stack)

    def property(
        self,
        prop: str,
        old: Mapping[str, Any],
        new: Mapping[str, Any],
        required: tuple[set[Any], set[Any]],
        where: str,
        side: Side,
    ) -> None:
        was_required, is_required = prop in required[0], prop in required[1]
        if prop not in new:
            self.add("property removed", side, where)
        elif prop not in old:
            variant: Literal["required", "optional"] = "required" if is_required else "optional"
            self.add("property added", side, where, variant, variant=variant)
        elif is_required and not was_required:
            self.add("made required", side, where)
        elif was_required and not is_required:
            self.add("made optional", side, where)
        if prop in old and prop in new:
            old_schema, _ = _resolve(self.old, old[prop])
            new_schema, _ = _resolve(self.new, new[prop])
            if new_schema.get("deprecated") and not old_schema.get("deprecated"):
                self.add("deprecated", side, where)

    def nullability(self, was: bool, now: bool, where: str, side: Side) -> None:
        if now and not was:
            self.add("made nullable", side, where)
        elif was and not now:
            self.add("made non-nullable", side, where)

    def enum(self, old: Mapping[str, object], new: Mapping[str, object], where: str, side: Side) -> None:
        for value in sorted(new.keys() - old.keys()):
            self.add("enum value added", side, where, value)
        for value in sorted(old.keys() - new.keys()):
            self.add("enum value removed", side, where, value)

    def generated_class(self, where: str, old_name: str | None, new_name: str | None) -> tuple[str | None, str | None]:
        """The classes the generated client uses at `where` on each side.

        From the generator's own parser; the component names stand in only when
        a side did not parse (the pipeline then refuses that spec anyway).
        """
        (key, name) = self.current
        place = (*key, where.removeprefix(f"{name} "))
        if not (self.old_names.at and self.new_names.at):
            return old_name, new_name
        return self.old_names.at.get(place), self.new_names.at.get(place)

    def removed_models(self) -> None:
        """A generated class that is gone, when no rename already says where it went."""
        for name in sorted(self.old_names.classes - self.new_names.classes - self.renamed_classes):
            self.add("model removed", None, name, _model_module(name, self.old_names))

    def headers(self, where: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        # Header names are case-insensitive (RFC 9110): X-Next-Token and x-next-token are one header.
        old_by_name = {str(name).lower(): (name, value) for name, value in old.items()}
        new_by_name = {str(name).lower(): (name, value) for name, value in new.items()}
        # A header the generated client does not surface is documentation: no generated code reads it.
        variant: Variant = "surfaced" if self.surfaced_headers else "not surfaced"
        for key in sorted(old_by_name.keys() | new_by_name.keys()):
            shown = (new_by_name.get(key) or old_by_name[key])[0]
            at = f"{where} header {shown}"
            if key not in new_by_name:
                self.add("response header removed", "response", at, variant=variant)
            elif key not in old_by_name:
                self.add("response header added", "response", at, variant=variant)
            else:
                old_header, _ = _resolve(self.old, old_by_name[key][1])
                new_header, _ = _resolve(self.new, new_by_name[key][1])
                old_schema = old_header.get("schema", _media_schema(old_header.get("content"))[1])
                new_schema = new_header.get("schema", _media_schema(new_header.get("content"))[1])
                if self.surfaced_headers:
                    self.schema(old_schema, new_schema, at, "", "response", frozenset())
                elif without_text(_resolve(self.old, old_schema)[0]) != without_text(_resolve(self.new, new_schema)[0]):
                    self.header_texts += 1

    def security(self, op: str, old_op: Mapping[str, Any], new_op: Mapping[str, Any]) -> None:
        """Compare the ways a caller may authenticate: each alternative is a set of schemes, all required.

        A way is lost when no new alternative is part of it with each of its schemes sent as before
        (type, place, and name: a header's case-insensitively, as HTTP reads it). With the SDK's
        credential known, what counts is whether the SDK still gets in; without it, every caller.
        """
        where = f"{op} security"
        old, new = security_alternatives(self.old, old_op), security_alternatives(self.new, new_op)
        old_schemes = _as_mapping(_as_mapping(self.old.get("components")).get("securitySchemes"))
        new_schemes = _as_mapping(_as_mapping(self.new.get("components")).get("securitySchemes"))
        offered: set[str] = set().union(*new)
        changed = {
            scheme
            for scheme in set().union(*old) & offered
            if scheme_key(old_schemes.get(scheme)) != scheme_key(new_schemes.get(scheme))
        }

        def identity(scheme: str) -> str:
            return f"{scheme}: {scheme_identity(old_schemes.get(scheme))} -> {scheme_identity(new_schemes.get(scheme))}"

        if self.credentials is None:
            self._any_caller_security(where, old, new, changed, identity)
            return
        sdk = self.credentials
        refused = any(way <= sdk for way in old) and not any(way <= sdk and not way & changed for way in new)
        lost = [way for way in sorted(old, key=sorted) if not any(now <= way and not now & changed for now in new)]
        said: set[str] = set()
        for way in lost:
            variant: Variant = "the SDK's credential" if refused and way <= sdk else "another credential"
            removed = sorted(way - offered)
            for scheme in removed:
                self.security_change("security scheme removed", variant, where, scheme, now_text(new, refused))
            for scheme in sorted(way & changed):
                self.security_change("security scheme changed", variant, where, scheme, identity(scheme))
            if not removed and not way & changed:
                text = " + ".join(sorted(way)) or "no credentials"
                self.security_change("security requirement added", variant, where, text, alternatives_text(way, new))
            said |= way
        for scheme in sorted(set().union(*old) - offered - said):
            self.security_change("security scheme removed", "another credential", where, scheme, "")
        for scheme in sorted(changed - said):
            self.security_change("security scheme changed", "another credential", where, scheme, identity(scheme))
        for way in sorted(new - old, key=sorted):
            if not way:
                self.add("security made optional", "request", where, "an alternative with no credentials")
                continue
            usable = way <= sdk and not way & changed
            if not usable and refused:
                continue  # the SDK's refusal above says what the operation accepts now
            variant = "the SDK's credential" if usable else "another credential"
            self.security_change("security alternative added", variant, where, " + ".join(sorted(way)), "")

    def _any_caller_security(
        self,
        where: str,
        old: frozenset[frozenset[str]],
        new: frozenset[frozenset[str]],
        changed: set[str],
        identity: Callable[[str], str],
    ) -> None:
        """Without the SDK's credential: callers whose old alternative no new one fits into are stranded."""
        offered: set[str] = set().union(*new)
        stranded = [old_way for old_way in sorted(old - new, key=sorted) if not any(way <= old_way for way in new)]
        for old_way in stranded:
            for scheme in sorted(old_way - offered):
                self.add("security scheme removed", "request", f"{where} {scheme}", scheme)
            if old_way <= offered:
                text = " + ".join(sorted(old_way)) or "no credentials"
                self.add("security requirement added", "request", f"{where} {text}", alternatives_text(old_way, new))
        for new_way in sorted(new - old, key=sorted):
            if not new_way:
                self.add("security made optional", "request", where, "an alternative with no credentials")
            elif not stranded:
                # Next to a breaking change the new alternative is its replacement, said there.
                text = " + ".join(sorted(new_way))
                self.add("security alternative added", "request", f"{where} {text}", text)
        for scheme in sorted(changed):
            self.add("security scheme changed", "request", f"{where} {scheme}", identity(scheme))

    def security_change(self, kind: ChangeKind, variant: Variant, where: str, subject: str, detail: str) -> None:
        """One security change at `where`; one no SDK caller sees is gathered with the same change elsewhere."""
        if RULES[(kind, variant, "request")][0] == "none":
            self.unseen_security.setdefault((kind, variant, subject, detail), set()).add(
                where.removesuffix(" security")
            )
        else:
            self.add(kind, "request", f"{where} {subject}", detail, variant=variant)

    def security_notes(self) -> None:
        """The security changes no SDK caller sees: one line each, naming the operations."""
        for (kind, variant, subject, detail), ops in sorted(
            self.unseen_security.items(), key=lambda item: item[0][:1] + item[0][2:]
        ):
            names = sorted(ops)
            shown = ", ".join(names[:_OPERATIONS_SHOWN])
            if len(names) > _OPERATIONS_SHOWN:
                shown += f" and {len(names) - _OPERATIONS_SHOWN} more"
            where = f"in {len(names)} operation{'s' if len(names) != 1 else ''} ({shown})"
            self.add(kind, "request", subject, f"{detail}; {where}" if detail else where, variant=variant)

    def scheme_texts(self) -> int:
        """The security schemes' reworded texts: documentation of the SDK's credential, else no SDK change.

        A scheme the SDK never sends is not in the generated code or the SDK's docs, so its text is listed
        under "Upstream only", as every other change to such a scheme is; without a known credential
        every scheme may be the caller's, and its text counts as a description change.
        """
        old_schemes = _as_mapping(_as_mapping(self.old.get("components")).get("securitySchemes"))
        new_schemes = _as_mapping(_as_mapping(self.new.get("components")).get("securitySchemes"))
        counted = 0
        for scheme in sorted(old_schemes.keys() & new_schemes.keys()):
            texts = count_text_changes(old_schemes[scheme], new_schemes[scheme])
            if not texts:
                continue
            if self.credentials is None or scheme in self.credentials:
                counted += texts
            else:
                self.add("security scheme description changed", "request", scheme, variant="another credential")
        return counted

    def error_codes(self) -> None:
        old, new = documented_error_codes(self.old), documented_error_codes(self.new)
        for code in sorted(old.keys() | new.keys()):
            if code not in new:
                self.add("error code removed", None, code)
            elif code not in old:
                self.add("error code added", None, code, single_spaced(new[code]))
            elif single_spaced(old[code]) != single_spaced(new[code]):
                self.error_code_texts += 1


_OPERATIONS_SHOWN = 3


def _model_module(name: str, names: GeneratedNames) -> str:
    places = sorted(f"{method} {path} {place}" for (method, path, place), used in names.at.items() if used == name)
    return f"was used at {places[0]}" if places else ""
