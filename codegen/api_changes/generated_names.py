"""The Python names openapi-python-client gives a spec's schemas, by where they are used; remembered by spec.

How it works, and why: docs/maintainers/design.md, "codegen/api_changes/generated_names.py".
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codegen.generation.generators import CLIENT_CONFIG
from toolkit.paths import Project
from toolkit.records import Records, source_of

if TYPE_CHECKING:  # the parser's module is imported only when a spec's names are not remembered
    from codegen.api_changes.client_parser import Place

_PARSER = "codegen.api_changes.client_parser"


@dataclass(frozen=True)
class GeneratedNames:
    """The classes the generated client holds, and which one each place in the spec uses."""

    classes: frozenset[str]
    at: Mapping[Place, str]


def parser_records(project: Project) -> Records:
    """Where the parser's answers are remembered: they depend on it, its configuration and this code."""
    from importlib.metadata import version

    return Records(
        project,
        "client-parser",
        {
            "openapi-python-client": version("openapi-python-client").encode(),
            "config": (Path(__file__).resolve().parents[1] / CLIENT_CONFIG).read_bytes(),
            # The path key the comparison hands the parse is compare's own.
            **{module: source_of(module) for module in (__name__, _PARSER, "codegen.api_changes.compare")},
        },
    )


def generated_names(
    spec: dict[str, Any], path_key: Callable[[str], str], *, records: Records | None = None
) -> GeneratedNames:
    """Parse `spec` as the generator does; `path_key` blanks path parameters as the comparison does."""
    data = json.dumps(spec).encode()
    known = records.recall(data) if records is not None else None
    names = _names_from(known)
    if names is None:
        from codegen.api_changes.client_parser import parse_names

        names = GeneratedNames(*parse_names(spec, path_key))
        if records is not None:
            records.remember(data, _as_value(names))
    return names


def client_surfaces_response_headers(records: Records | None = None) -> bool:
    """Whether the generated client surfaces a response's documented headers: its generator's parser reads them."""
    known = records.recall(b"response headers") if records is not None else None
    if isinstance(known, bool):
        return known
    from codegen.api_changes.client_parser import surfaces_response_headers

    surfaced = surfaces_response_headers()
    if records is not None:
        records.remember(b"response headers", surfaced)
    return surfaced


def _as_value(names: GeneratedNames) -> dict[str, Any]:
    return {"classes": sorted(names.classes), "at": [[*place, name] for place, name in names.at.items()]}


def _names_from(value: object) -> GeneratedNames | None:
    """The names a remembered value holds; None when it is not one `_as_value` wrote."""
    if not isinstance(value, dict):
        return None
    classes, at = value.get("classes"), value.get("at")
    if not isinstance(classes, list) or not isinstance(at, list):
        return None
    rows = [row for row in at if isinstance(row, list) and len(row) == 4]
    if len(rows) != len(at) or not all(isinstance(text, str) for text in (*classes, *(t for r in rows for t in r))):
        return None
    return GeneratedNames(frozenset(classes), {(method, path, place): name for method, path, place, name in rows})
