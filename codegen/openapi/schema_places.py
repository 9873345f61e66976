"""How far a spec's schemas unfold below its operations: counted once, against a budget, before any walk.

How it works, and why: docs/maintainers/design.md, "codegen/openapi/schema_places.py".
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import unquote

from codegen.openapi.json_pointer import Segments, resolve_pointer
from codegen.openapi.operations import HTTP_METHODS
from toolkit.errors import Problem, ToolError

MAX_PLACES = 20_000
# Keys whose value is one schema below this one, and keys whose values (a map or a list) each are.
_ONE = ("items", "additionalProperties", "not")
_EACH = ("properties", "patternProperties", "allOf", "anyOf", "oneOf")


def too_tangled(below: str) -> str:
    """What a spec past the budget is told, in one line."""
    return (
        f"the schemas below {below} unfold into more than {MAX_PLACES:,} places (parameters, bodies, "
        "properties, items, each through its $refs): a spec this tangled is refused, since every "
        "walk of it would take that long"
    )


class Budget:
    """The places one walk may still visit; past MAX_PLACES it stops the run (`too_tangled`)."""

    def __init__(self) -> None:
        self.left = MAX_PLACES

    def spend(self, below: str) -> None:
        self.left -= 1
        if self.left < 0:
            raise ToolError(Problem(too_tangled(below)))


def first_overflow(spec: Mapping[str, Any]) -> Segments | None:
    """The operation (its pointer) at which the places counted so far pass MAX_PLACES; None when they never do."""
    counted = 0
    for pointer, roots in _operations(spec):
        for root in roots:
            counted += _places(spec, root, MAX_PLACES - counted + 1)
            if counted > MAX_PLACES:
                return pointer
    return None


def _places(spec: Mapping[str, Any], root: object, budget: int) -> int:
    """The places below `root`, each path counted (a node already on the path ends it), up to `budget`.

    Every child reached counts, also one that ends its path, so that the work is bounded by the
    budget whatever the shape (a node with thousands of properties that all refer to itself).
    """
    counted = 1
    on_path: set[int] = set()
    # Depth-first without recursion (a path may be as long as the budget): a node, or the marker
    # that the walk is leaving the node with that id.
    stack: list[tuple[object, int | None]] = [(root, None)]
    while stack:
        node, leaving = stack.pop()
        if leaving is not None:
            on_path.discard(leaving)
            continue
        schema = _resolve(spec, node)
        if schema is None or id(schema) in on_path:
            continue
        children = list(_children(schema))
        counted += len(children)
        if counted >= budget:
            break
        on_path.add(id(schema))
        stack.append((None, id(schema)))
        stack.extend((child, None) for child in children)
    return counted


def _children(schema: Mapping[str, Any]) -> Iterator[object]:
    for key in _ONE:
        if isinstance(schema.get(key), Mapping):
            yield schema[key]
    for key in _EACH:
        value = schema.get(key)
        if isinstance(value, Mapping):
            yield from value.values()
        elif isinstance(value, list):
            yield from value


def _operations(spec: Mapping[str, Any]) -> Iterator[tuple[Segments, list[object]]]:
    """Each operation's pointer, and the schemas and objects its places start from."""
    paths = spec.get("paths")
    for path, raw_item in paths.items() if isinstance(paths, Mapping) else ():
        item = _resolve(spec, raw_item)
        if item is None:
            continue
        for method in HTTP_METHODS:
            operation = item.get(method)
            if isinstance(operation, Mapping):
                yield ("paths", path, method), list(_roots(spec, item, operation))


def _roots(spec: Mapping[str, Any], item: Mapping[str, Any], operation: Mapping[str, Any]) -> Iterator[object]:
    for owner in (item, operation):
        parameters = owner.get("parameters")
        for parameter in parameters if isinstance(parameters, list) else ():
            yield from _schemas_of(spec, parameter)
    yield from _schemas_of(spec, operation.get("requestBody"))
    responses = operation.get("responses")
    for response in responses.values() if isinstance(responses, Mapping) else ():
        yield from _schemas_of(spec, response)
        resolved = _resolve(spec, response)
        headers = resolved.get("headers") if resolved is not None else None
        for header in headers.values() if isinstance(headers, Mapping) else ():
            yield from _schemas_of(spec, header)


def _schemas_of(spec: Mapping[str, Any], node: object) -> Iterator[object]:
    """A parameter's, header's, body's or response's schemas: its own, and each media type's."""
    resolved = _resolve(spec, node)
    if resolved is None:
        return
    if "schema" in resolved:
        yield resolved["schema"]
    content = resolved.get("content")
    for media in content.values() if isinstance(content, Mapping) else ():
        if isinstance(media, Mapping) and "schema" in media:
            yield media["schema"]


def _resolve(spec: Mapping[str, Any], node: object) -> Mapping[str, Any] | None:
    """`node` with its local `$ref`s followed (their chains are short: the reference check came first)."""
    for _ in range(64):
        if not isinstance(node, Mapping):
            return None
        ref = node.get("$ref")
        if not isinstance(ref, str):
            return node
        if not ref.startswith("#"):
            return None
        try:
            found, node = resolve_pointer(spec, unquote(ref[1:]))
        except ValueError:
            return None
        if not found:
            return None
    return None
