"""The operations of an OpenAPI document: one set of HTTP methods, one way to walk them."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

# The path item keys that hold an operation (OpenAPI 3.2 adds `query`).
HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace", "query")


def iter_operations(spec: Mapping[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(path, method, operation) for every operation under `paths`, in document order.

    Anything that is not a mapping where one is expected is skipped: the spec
    was validated, and a filtered spec is walked too.
    """
    paths = spec.get("paths")
    for path, item in paths.items() if isinstance(paths, Mapping) else ():
        for method in HTTP_METHODS:
            operation = item.get(method) if isinstance(item, Mapping) else None
            if isinstance(operation, dict):
                yield path, method, operation


def snake_case(operation_id: str) -> str:
    """What openapi-python-client makes of an operationId for a module name: pauseSandbox -> pause_sandbox."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", operation_id).lower()


def success_statuses(operation: Mapping[str, Any]) -> tuple[int, ...]:
    """The 2xx statuses among the operation's responses, in order (a `2XX` range names no status)."""
    responses = operation.get("responses")
    keys = responses if isinstance(responses, Mapping) else ()
    return tuple(sorted({int(str(key)) for key in keys if re.fullmatch(r"2[0-9][0-9]", str(key))}))
