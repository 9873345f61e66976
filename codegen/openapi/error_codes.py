"""The `error_code` values a spec documents on `Error.error_code`, in every form upstreams use.

How it works, and why: docs/maintainers/design.md, "codegen/openapi/error_codes.py".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from codegen.openapi.document import SpecDocument
from codegen.openapi.json_pointer import format_pointer, resolve_pointer
from toolkit.errors import Problem

ERROR_CODE_FIELD = ("components", "schemas", "Error", "properties", "error_code")
ERROR_CODE_FIELD_POINTER = format_pointer(ERROR_CODE_FIELD)
CODE = re.compile(r"[a-z][a-z0-9_]*")
# In prose a code is a snake_case word with at least one underscore, not part
# of a longer token: "x-error-codes" or "see error_code.md" name no code.
_PROSE_CODE = re.compile(r"(?<![\w\-./`])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w\-/`]|\.\w)")
_REMEDY = (
    "error codes become Python constants (e2b.api.error_codes): the upstream must spell them "
    "snake_case ([a-z][a-z0-9_]*), each distinct; land the fix upstream, then bump"
)


def constant_name(code: str) -> str:
    return re.sub(r"[^0-9A-Za-z]+", "_", code).strip("_").upper() + "_ERROR_CODE"


def error_code_field(spec: Mapping[str, Any]) -> Mapping[str, Any]:
    """`Error.error_code`'s schema, following one local $ref; empty when there is none."""
    found, node = resolve_pointer(spec, ERROR_CODE_FIELD)
    if found and isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/"):
        found, node = resolve_pointer(spec, node["$ref"][1:])
    return node if found and isinstance(node, dict) else {}


def codes_in_schema(schema: Mapping[str, Any]) -> dict[str, str]:
    """code -> description ("" when its form carries none): x-error-codes, then enum, then prose."""
    codes: dict[str, str] = {}
    structured = schema.get("x-error-codes")
    if isinstance(structured, dict):
        codes.update({str(code): str(text or "").strip() for code, text in structured.items()})
    enum = schema.get("enum")
    for code in enum if isinstance(enum, list) else ():
        codes.setdefault(str(code), "")
    description = schema.get("description")
    for code in _PROSE_CODE.findall(description) if isinstance(description, str) else ():
        codes.setdefault(code, "")
    return codes


def documented_error_codes(spec: Mapping[str, Any]) -> dict[str, str]:
    """Every code `Error.error_code` documents, in any form."""
    return codes_in_schema(error_code_field(spec))


def error_code_problems(doc: SpecDocument) -> list[Problem]:
    """Codes that cannot become distinct Python constants, each with its pointer and line."""
    schema = error_code_field(doc.data)
    places: list[tuple[str, str]] = []  # (code, pointer)
    structured = schema.get("x-error-codes")
    if isinstance(structured, dict):
        places += [(str(code), format_pointer((*ERROR_CODE_FIELD, "x-error-codes", code))) for code in structured]
    enum = schema.get("enum")
    if isinstance(enum, list):
        places += [(str(code), format_pointer((*ERROR_CODE_FIELD, "enum", index))) for index, code in enumerate(enum)]
    problems = [
        Problem(f"error code {code!r} is not snake_case ([a-z][a-z0-9_]*)", where=doc.where(pointer), remedy=_REMEDY)
        for code, pointer in places
        if not CODE.fullmatch(code)
    ]
    first: dict[str, str] = {}
    for code in documented_error_codes(doc.data):
        other = first.setdefault(constant_name(code), code)
        if other != code:
            problems.append(
                Problem(
                    f"error codes {other!r} and {code!r} would both be the constant {constant_name(code)}",
                    where=doc.where(ERROR_CODE_FIELD_POINTER),
                    remedy=_REMEDY,
                )
            )
    return problems
