"""This repository's names for the SDK's operations: spec/operations.yml, name -> `METHOD /path`.

The upstream spec identifies an operation by its method and path; its
`operationId` is optional (the real runtime spec has none) and free to change.
openapi-python-client names modules and functions after the operationId, so
the filter step (`codegen.openapi.sdk_filter`) sets each mapped operation's
operationId to this repository's name, in memory, and removes the upstream's
from the others (the generator then names them from method and path).  The SDK
and its templates only ever see these names.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codegen.openapi.document import SpecDocument
from codegen.openapi.json_pointer import format_pointer
from codegen.openapi.operations import HTTP_METHODS, iter_operations, snake_case
from codegen.openapi.plain_yaml import YamlTree, load_yaml, load_yaml_file
from toolkit.errors import Problem, ToolError
from toolkit.paths import OPERATIONS

UPSTREAM_OPERATION_ID = "x-upstream-operation-id"
REMEDY = (
    "an operation the SDK maps lands upstream first: bump spec/runtime-ref to a runtime commit "
    "that has it (`nox -s bump -- <commit>`), or point its spec/operations.yml entry at where it moved"
)
_ENTRY = re.compile(r"(?P<method>[A-Z]+) (?P<path>/\S*)")


@dataclass(frozen=True)
class MappedOperation:
    name: str
    method: str  # lower case, as the spec's path item keys
    path: str

    @property
    def endpoint(self) -> str:
        return f"{self.method.upper()} {self.path}"

    @property
    def pointer(self) -> str:
        return format_pointer(("paths", self.path, self.method))


def load_operation_map(path: Path, *, display_path: str = OPERATIONS) -> tuple[MappedOperation, ...]:
    """Read the map; raise ToolError naming every bad entry (nothing is generated)."""
    return _entries(load_yaml_file(path, display_path=display_path, what="the operation map"))


def parse_operation_map(data: bytes, *, display_path: str = OPERATIONS) -> tuple[MappedOperation, ...]:
    """The map from bytes already read (codegen/generation/inputs.py)."""
    return _entries(load_yaml(data, display_path=display_path))


def _entries(tree: YamlTree) -> tuple[MappedOperation, ...]:
    if not isinstance(tree.data, dict):
        raise ToolError(Problem("the operation map must be a mapping of name: METHOD /path", where=tree.where("")))
    problems: list[Problem] = []
    entries: list[MappedOperation] = []
    for name, value in tree.data.items():
        where = tree.where((name,))
        if not name.isidentifier() or not name.isascii():
            problems.append(Problem(f"{name!r} is not a Python identifier", where=where, remedy="rename the entry"))
            continue
        if keyword.iskeyword(name) or keyword.iskeyword(snake_case(name)):
            problems.append(Problem(f"{name!r} is a Python keyword", where=where, remedy="rename the entry"))
            continue
        match = _ENTRY.fullmatch(value) if isinstance(value, str) else None
        if match is None or match["method"].lower() not in HTTP_METHODS:
            problems.append(
                Problem(
                    f"{name}: {value!r} is not `METHOD /path`",
                    where=where,
                    remedy=f"write it as e.g. `POST /sandboxes/{{sandboxID}}/pause` ({', '.join(HTTP_METHODS)})",
                )
            )
            continue
        entries.append(MappedOperation(name, match["method"].lower(), match["path"]))
    problems += _clashes(entries, tree.where)
    if problems:
        raise ToolError(*problems)
    return tuple(entries)


def _clashes(entries: list[MappedOperation], where: Any) -> list[Problem]:
    problems: list[Problem] = []
    by_endpoint: dict[tuple[str, str], MappedOperation] = {}
    by_module: dict[str, MappedOperation] = {}
    for entry in entries:
        first = by_endpoint.setdefault((entry.method, entry.path), entry)
        if first is not entry:
            problems.append(
                Problem(
                    f"{first.name} and {entry.name} both map {entry.endpoint}",
                    where=where((entry.name,)),
                    remedy="one name per operation: remove one of the two entries",
                )
            )
        other = by_module.setdefault(snake_case(entry.name), entry)
        if other is not entry:
            problems.append(
                Problem(
                    f"{other.name} and {entry.name} would both be generated as module {snake_case(entry.name)}",
                    where=where((entry.name,)),
                    remedy="rename one of the two entries",
                )
            )
    return problems


def check_operation_map(
    doc: SpecDocument, operations: tuple[MappedOperation, ...], tags: tuple[str, ...]
) -> list[Problem]:
    """Every mapped operation the spec lacks, or does not expose to the SDK, reported like a contract miss."""
    problems: list[Problem] = []
    for entry in operations:
        operation = _operation_at(doc.data, entry)
        if operation is None:
            problems.append(
                Problem(
                    f"operation map miss: {entry.name} is {entry.endpoint}, which the spec does not have",
                    where=doc.where(entry.pointer),
                    remedy=REMEDY,
                )
            )
        elif not set(operation.get("tags") or ()) & set(tags):
            problems.append(
                Problem(
                    f"operation map miss: {entry.name} ({entry.endpoint}) is tagged "
                    f"{operation.get('tags') or 'nothing'}, none of the SDK's tags ({', '.join(tags)})",
                    where=doc.where(entry.pointer),
                    remedy="add its tag to sdk-tags in pyproject.toml [tool.codegen], or remove the entry",
                )
            )
    return problems


def _operation_at(spec: Mapping[str, Any], entry: MappedOperation) -> dict[str, Any] | None:
    item = spec.get("paths", {}).get(entry.path) if isinstance(spec.get("paths"), dict) else None
    operation = item.get(entry.method) if isinstance(item, dict) else None
    return operation if isinstance(operation, dict) else None


def name_operations(spec: dict[str, Any], operations: tuple[MappedOperation, ...]) -> None:
    """Give mapped operations this repository's operationId and the others none (in place).

    The upstream's own id is kept as `x-upstream-operation-id`, so the API
    change report can say that an upstream rename changes nothing in the SDK.
    """
    names = {(entry.method, entry.path): entry.name for entry in operations}
    for path, method, operation in iter_operations(spec):
        upstream = operation.pop("operationId", None)
        if upstream is not None:
            operation.setdefault(UPSTREAM_OPERATION_ID, upstream)
        if (method, path) in names:
            operation["operationId"] = names[(method, path)]
