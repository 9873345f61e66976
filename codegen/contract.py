"""The contract gate: spec elements the SDK relies on, kept as data in spec/contract.yml.

A miss is never fixed here or in spec/openapi.yml: the spec is a copy of the
runtime's, so the contract has to land upstream first.  The vocabulary is
documented at the top of spec/contract.yml; `_CHECKS` below is its meaning.

The `credential` entries name the security schemes the SDK sends: besides
gating generation, they tell the API change report (`credential_schemes`)
which security changes reach SDK users.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codegen.openapi.document import SpecDocument
from codegen.openapi.error_codes import CODE, codes_in_schema
from codegen.openapi.json_pointer import PointerSyntaxError, Segments, parse_pointer, resolve_pointer
from codegen.openapi.plain_yaml import YamlTree, load_yaml, load_yaml_file
from toolkit.errors import Problem, ToolError
from toolkit.printable import printable

REMEDY = (
    "the contract lands upstream first: bump spec/runtime-ref to a runtime commit "
    "that carries it (`nox -s bump -- <commit>`); never hand-edit spec/openapi.yml"
)
_JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object", "null"})
_JSON_CONTENT = ("content", "application/json", "schema")
_SCHEMES = ("components", "securitySchemes")
# What a credential says about its scheme: the keys that decide what a caller sends, and where.
_CREDENTIAL_KEYS = ("type", "in", "name", "scheme")
_CREDENTIAL_TYPES = frozenset({"apiKey", "http", "oauth2", "openIdConnect", "mutualTLS"})
# error: the miss stops generation; warning: it is reported and generation proceeds.
LEVELS = ("error", "warning")
# Entries about the data plane (a `service:` of the envd protos, or a pointer into the envd file a
# `spec:` names) are codegen/envd/contract.py's: the control plane's checks skip them.
DATA_PLANE_KEYS = ("service", "spec")


def is_data_plane(raw: Any) -> bool:
    return isinstance(raw, dict) and any(key in raw for key in DATA_PLANE_KEYS)


@dataclass(frozen=True)
class ContractEntry:
    """One thing the SDK relies on, and the checks that say it still holds."""

    pointer: str
    segments: Segments
    why: str
    checks: tuple[tuple[str, Any], ...]  # (check name, expected value), file order
    level: str = "error"  # one of LEVELS


@dataclass(frozen=True)
class ContractMisses:
    """What the contract found: errors stop generation, warnings are reported and it proceeds."""

    errors: list[Problem]
    warnings: list[Problem]


# A check looks at (spec, pointer segments, node) and the expected value, and
# returns None when it holds or a phrase saying what is wrong.
Check = Callable[[Any, Segments, Any, Any], str | None]


def load_contract(path: Path) -> list[ContractEntry]:
    """Read the contract; raise ToolError naming every malformed entry."""
    return _entries(load_yaml_file(path, display_path=str(path), what="the contract"))


def parse_contract(data: bytes, *, display_path: str) -> list[ContractEntry]:
    """The contract from bytes already read (codegen/generation/inputs.py)."""
    return _entries(load_yaml(data, display_path=display_path))


def _entries(tree: YamlTree) -> list[ContractEntry]:
    if not isinstance(tree.data, list):
        raise ToolError(Problem("the contract must be a list of entries", where=tree.where("")))
    entries: list[ContractEntry] = []
    problems: list[Problem] = []
    for index, raw_entry in enumerate(tree.data):
        if is_data_plane(raw_entry):
            continue
        entry, entry_problems = parse_entry(raw_entry, index, tree)
        problems.extend(entry_problems)
        if entry is not None:
            entries.append(entry)
    if problems:
        raise ToolError(*problems)
    return entries


def credential_schemes(entries: Sequence[ContractEntry]) -> frozenset[str] | None:
    """The security schemes the SDK sends, all of them on every call; None when the contract names none."""
    names = frozenset(entry.segments[-1] for entry in entries if any(name == "credential" for name, _ in entry.checks))
    return names or None


def check_contract(doc: SpecDocument, contract: Path | Sequence[ContractEntry]) -> ContractMisses:
    """Every contract miss in the spec, one Problem each, in contract order, split by level."""
    result = ContractMisses(errors=[], warnings=[])
    for entry in load_contract(contract) if isinstance(contract, Path) else contract:
        misses = check_entry(doc, entry)
        (result.warnings if entry.level == "warning" else result.errors).extend(misses)
    return result


def check_entry(doc: SpecDocument, entry: ContractEntry) -> list[Problem]:
    found, node = resolve_pointer(doc.data, entry.segments)
    if not found:
        # One miss, not one per check: the other checks say nothing new.
        return [_miss(doc, entry, f"{entry.pointer} is missing")]
    misses = (_CHECKS[name](doc.data, entry.segments, node, expected) for name, expected in entry.checks)
    return [_miss(doc, entry, f"{entry.pointer} {miss}") for miss in misses if miss is not None]


def _miss(doc: SpecDocument, entry: ContractEntry, what: str) -> Problem:
    if entry.level == "warning":
        return Problem(
            f"contract warning: {what}; wanted because {entry.why}",
            where=doc.where(entry.pointer),
            remedy="generation proceeds; " + REMEDY.replace("the contract lands", "this lands"),
        )
    return Problem(
        f"contract miss: {what}; needed because {entry.why}",
        where=doc.where(entry.pointer),
        remedy=REMEDY,
    )


# --- the checks -------------------------------------------------------------


def _check_exists(spec: Any, segments: Segments, node: Any, expected: Any) -> str | None:
    return None  # a missing node was already reported by check_entry


def _check_type(spec: Any, segments: Segments, node: Any, expected: Any) -> str | None:
    if not isinstance(node, dict):
        return f"is not a schema, so it has no type (needs type: {expected})"
    actual = node.get("type")
    if actual == expected:
        return None
    return f"has no type (needs {expected})" if actual is None else f"has type {actual!r} (needs {expected!r})"


def _check_default(spec: Any, segments: Segments, node: Any, expected: Any) -> str | None:
    if not isinstance(node, dict) or "default" not in node:
        return f"has no default (needs default: {_yaml_text(expected)})"
    actual = node["default"]
    # type() too: YAML's `0` and `false` compare equal in Python but not on the wire.
    if type(actual) is type(expected) and actual == expected:
        return None
    return f"has default {_yaml_text(actual)} (needs {_yaml_text(expected)})"


def _check_required(spec: Any, segments: Segments, node: Any, expected: Any) -> str | None:
    _, parent = resolve_pointer(spec, segments[:-2])
    required = parent.get("required") if isinstance(parent, dict) else None
    if isinstance(required, list) and segments[-1] in required:
        return None
    return f"is not listed in its schema's required list (needs {segments[-1]!r} there)"


def _check_ref(spec: Any, segments: Segments, node: Any, expected: Any) -> str | None:
    seen: set[str] = set()
    while isinstance(node, dict):
        if node.get("$ref") == expected:
            return None
        content_ok, schema = resolve_pointer(node, _JSON_CONTENT)
        if content_ok and isinstance(schema, dict) and schema.get("$ref") == expected:
            return None
        ref = node.get("$ref")
        # Responses are often shared (`$ref: '#/components/responses/503'`);
        # follow them, but only locally and never around a cycle.
        if not isinstance(ref, str) or not ref.startswith("#") or ref in seen:
            break
        seen.add(ref)
        try:
            _, node = resolve_pointer(spec, ref[1:])
        except PointerSyntaxError:
            break
    return f"does not refer to {expected} (neither as $ref nor as its application/json schema)"


def _check_credential(spec: Any, segments: Segments, node: Any, expected: Any) -> str | None:
    """The scheme asks for what the SDK sends: same type and place; a header's name and an auth scheme in any case."""
    if not isinstance(node, dict):
        return "is not a security scheme"
    for key in _CREDENTIAL_KEYS:
        if key not in expected:
            continue
        want, got = str(expected[key]), node.get(key)
        caseless = key == "scheme" or (key == "name" and expected.get("in") == "header")
        if not isinstance(got, str) or (got.lower() != want.lower() if caseless else got != want):
            asked = " ".join(f"{k}={printable(str(node[k]))}" for k in _CREDENTIAL_KEYS if k in node) or "nothing"
            sent = " ".join(f"{k}={expected[k]}" for k in _CREDENTIAL_KEYS if k in expected)
            return f"asks for {asked}, where the SDK sends {sent}"
    return None


def _check_documents(spec: Any, segments: Segments, node: Any, expected: Any) -> str | None:
    if isinstance(node, dict) and expected in codes_in_schema(node):
        return None
    return f"does not document the error code {expected!r} (in x-error-codes, in an enum, or named in its description)"


_CHECKS: Mapping[str, Check] = {
    "exists": _check_exists,
    "type": _check_type,
    "default": _check_default,
    "required": _check_required,
    "ref": _check_ref,
    "documents": _check_documents,
    "credential": _check_credential,
}


# --- reading the contract file ----------------------------------------------


def parse_entry(raw: Any, index: int, tree: YamlTree) -> tuple[ContractEntry | None, list[Problem]]:
    where = f"{tree.display_path}:{tree.line_of((str(index),))} (entry {index + 1})"
    if not isinstance(raw, dict):
        return None, [Problem("an entry must be a mapping with pointer, why and checks", where=where)]
    problems: list[Problem] = []
    unknown = [key for key in raw if key not in _CHECKS and key not in ("pointer", "why", "level")]
    if unknown:
        known = ", ".join(["pointer", "why", "level", *_CHECKS])
        problems.append(Problem(f"unknown key(s) {', '.join(unknown)}; known: {known}", where=where))
    segments = _entry_segments(raw.get("pointer"), where, problems)
    why = raw.get("why")
    if not isinstance(why, str) or not why.strip():
        problems.append(Problem("needs a `why`: the reason the SDK relies on this", where=where))
    level = raw.get("level", "error")
    if level not in LEVELS:
        problems.append(Problem(f"unknown level {_yaml_text(level)}; use one of {', '.join(LEVELS)}", where=where))
    checks = tuple((name, value) for name, value in raw.items() if name in _CHECKS)
    if not checks:
        problems.append(Problem(f"has no check; use one of {', '.join(_CHECKS)}", where=where))
    for name, value in checks:
        problems.extend(Problem(message, where=where) for message in _check_value_problems(name, value, segments))
    if problems or segments is None or not isinstance(why, str):
        return None, problems
    entry = ContractEntry(
        pointer=raw["pointer"], segments=segments, why=" ".join(why.split()), checks=checks, level=level
    )
    return entry, []


def _entry_segments(pointer: Any, where: str, problems: list[Problem]) -> Segments | None:
    if not isinstance(pointer, str):
        problems.append(Problem("needs a `pointer`: a JSON pointer into the spec", where=where))
        return None
    try:
        return parse_pointer(pointer)
    except PointerSyntaxError as error:
        problems.append(Problem(str(error), where=where))
        return None


def _check_value_problems(name: str, value: Any, segments: Segments | None) -> list[str]:
    if name in ("exists", "required") and value is not True:
        # `false` would read as "must be absent", which nothing needs yet.
        return [f"{name} must be true, not {_yaml_text(value)}"]
    if name == "required" and segments is not None and (len(segments) < 2 or segments[-2] != "properties"):
        return ["required: true needs a pointer ending in /properties/NAME"]
    if name == "type" and value not in _JSON_TYPES:
        return [f"type must be one of {', '.join(sorted(_JSON_TYPES))}, not {_yaml_text(value)}"]
    if name == "default" and isinstance(value, (dict, list)):
        return ["default must be a plain value (string, number, boolean, null)"]
    if name == "documents" and not (isinstance(value, str) and CODE.fullmatch(value)):
        return [f"documents must be a snake_case error code ([a-z][a-z0-9_]*), not {_yaml_text(value)}"]
    if name == "ref" and not (isinstance(value, str) and value.startswith("#/")):
        return [f"ref must be a local '#/components/...' reference, not {_yaml_text(value)}"]
    if name == "credential":
        return _credential_problems(value, segments)
    return []


def _credential_problems(value: Any, segments: Segments | None) -> list[str]:
    problems = []
    if segments is not None and (len(segments) != 3 or tuple(segments[:2]) != _SCHEMES):
        problems.append("credential needs a pointer to a security scheme: /components/securitySchemes/NAME")
    if not isinstance(value, dict) or set(value) - set(_CREDENTIAL_KEYS):
        problems.append(f"credential must be a mapping of {', '.join(_CREDENTIAL_KEYS)}")
        return problems
    if value.get("type") not in _CREDENTIAL_TYPES:
        problems.append(f"credential type must be one of {', '.join(sorted(_CREDENTIAL_TYPES))}")
    if value.get("type") == "apiKey" and not (value.get("in") in ("header", "query", "cookie") and value.get("name")):
        problems.append("an apiKey credential needs `in` (header, query or cookie) and `name`")
    if value.get("type") == "http" and not value.get("scheme"):
        problems.append("an http credential needs its `scheme` (bearer, basic, ...)")
    if any(not isinstance(v, str) for v in value.values()):
        problems.append("credential values must be strings")
    return problems


def _yaml_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "null" if value is None else repr(value)
