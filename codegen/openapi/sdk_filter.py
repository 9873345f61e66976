"""Cut the full API spec down to what the Python SDK exposes; envd's HTTP API too (`filter_internal`).

Mirrors the Redocly decorators the other SDKs use, in the same order:
filter-in by operation tags, filter-out `x-not-implemented: true`, then
remove-unused-components.  envd's: filter-out `x-internal: true` (the
orchestrator's own operations), then remove-unused-components.  Pure:
the input is deep-copied, never touched.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from typing import Any

from codegen.openapi.json_pointer import format_pointer, parse_pointer, resolve_pointer
from codegen.openapi.operation_map import MappedOperation, name_operations
from codegen.openapi.operations import HTTP_METHODS, iter_operations
from toolkit.errors import Problem, ToolError

NOT_IMPLEMENTED = "x-not-implemented"
# envd.yaml's mark on what only the orchestrator calls, from the host (/init, /freeze, ...): never the SDK.
INTERNAL = "x-internal"


def filter_spec(
    data: dict[str, Any], *, tags: Sequence[str], operations: Sequence[MappedOperation] | None = None
) -> dict[str, Any]:
    """The spec with only `tags`' operations, nothing not implemented, no unused components.

    With `operations` (spec/operations.yml), each operation is then named by
    it, whatever operationId the upstream gave it, if any.
    """
    spec = copy.deepcopy(data)
    wanted = set(tags)
    _drop_marked(spec, NOT_IMPLEMENTED)
    _keep_tagged_operations(spec, wanted)
    _keep_used_tags(spec, wanted)
    _remove_unused_components(spec)
    _raise_on_dangling_refs(spec, NOT_IMPLEMENTED)
    if operations is not None:
        name_operations(spec, tuple(operations))
    return spec


def filter_internal(data: dict[str, Any], *, display_path: str) -> dict[str, Any]:
    """envd's HTTP API without what is marked `x-internal: true`, nor the paths and components left unused.

    No tags: envd.yaml tags some of its public operations only (`/health` has none).  A problem names
    its place as `display_path#pointer`: there are two specs in a run.
    """
    spec = copy.deepcopy(data)
    _drop_marked(spec, INTERNAL)
    _drop_empty_paths(spec)
    _remove_unused_components(spec)
    _raise_on_dangling_refs(spec, INTERNAL, f"{display_path}#")
    return spec


# --- filter-out: x-not-implemented, x-internal --------------------------------


def _is_marked(node: Any, mark: str) -> bool:
    return isinstance(node, dict) and node.get(mark) is True


def _drop_marked(node: Any, mark: str) -> None:
    """Remove every node marked `mark: true` below `node`, wherever it sits."""
    if isinstance(node, dict):
        properties = node.get("properties")
        if isinstance(properties, dict):
            _forget_required(node, {name for name, value in properties.items() if _is_marked(value, mark)})
        for key in [key for key, value in node.items() if _is_marked(value, mark)]:
            del node[key]
        for value in node.values():
            _drop_marked(value, mark)
    elif isinstance(node, list):
        node[:] = [item for item in node if not _is_marked(item, mark)]
        for item in node:
            _drop_marked(item, mark)


def _drop_empty_paths(spec: dict[str, Any]) -> None:
    """A path whose every operation was dropped goes too (its parameters alone are no endpoint)."""
    paths = spec.get("paths")
    if not isinstance(paths, dict):
        return
    for route in list(paths):
        item = paths[route]
        if isinstance(item, dict) and "$ref" not in item and not any(method in item for method in HTTP_METHODS):
            del paths[route]


def _forget_required(schema: dict[str, Any], dropped: set[str]) -> None:
    """A property that no longer exists cannot stay required."""
    required = schema.get("required")
    if not dropped or not isinstance(required, list):
        return
    kept = [name for name in required if name not in dropped]
    if kept:
        schema["required"] = kept
    else:
        # OpenAPI 3.0 forbids an empty `required` list.
        del schema["required"]


# --- filter-in: tags --------------------------------------------------------


def _keep_tagged_operations(spec: dict[str, Any], wanted: set[str]) -> None:
    paths = spec.get("paths")
    if not isinstance(paths, dict):
        return
    for route in list(paths):
        item = paths[route]
        if not isinstance(item, dict) or "$ref" in item:
            # A path item given by $ref has its operations elsewhere; keep it
            # whole rather than guess (its target stays reachable below).
            continue
        for method in HTTP_METHODS:
            if method in item and not _has_wanted_tag(item[method], wanted):
                del item[method]
        if not any(method in item for method in HTTP_METHODS):
            del paths[route]


def _has_wanted_tag(operation: Any, wanted: set[str]) -> bool:
    op_tags = operation.get("tags") if isinstance(operation, dict) else None
    return isinstance(op_tags, list) and any(tag in wanted for tag in op_tags)


def _keep_used_tags(spec: dict[str, Any], wanted: set[str]) -> None:
    if not isinstance(spec.get("tags"), list):
        return
    used = {tag for operation in _operations(spec) for tag in operation.get("tags", [])}
    spec["tags"] = [
        tag for tag in spec["tags"] if isinstance(tag, dict) and tag.get("name") in wanted and tag.get("name") in used
    ]


def _operations(spec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    return (operation for _, _, operation in iter_operations(spec))


# --- remove-unused-components -----------------------------------------------

Component = tuple[str, str]  # (section, name), e.g. ("schemas", "Error")


def _remove_unused_components(spec: dict[str, Any]) -> None:
    components = spec.get("components")
    if not isinstance(components, dict):
        return
    used = _reachable_components(spec)
    for section in list(components):
        entries = components[section]
        if not isinstance(entries, dict):
            continue
        for name in [name for name in entries if (section, name) not in used]:
            del entries[name]
        if not entries:
            del components[section]
    if not components:
        del spec["components"]


def _reachable_components(spec: dict[str, Any]) -> set[Component]:
    """Components reached from everything outside `components`, transitively."""
    roots = {key: value for key, value in spec.items() if key != "components"}
    pending = [*_refs_in(roots), *_security_schemes_used(spec)]
    reached: set[Component] = set()
    while pending:
        component = pending.pop()
        if component in reached:
            continue  # also what stops a cycle of refs
        reached.add(component)
        found, node = resolve_pointer(spec, ("components", *component))
        if found:
            pending.extend(_refs_in(node))
    return reached


def _refs_in(node: Any) -> Iterator[Component]:
    for _, ref in _iter_refs(node, ()):
        component = _component_of(ref)
        if component is not None:
            yield component


def _iter_refs(node: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], str]]:
    """Every reference below `node`, with where it is written."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield path, value
            elif key == "mapping" and isinstance(value, dict):
                # discriminator.mapping values are refs written as plain strings.
                yield from (((*path, key, name), ref) for name, ref in value.items() if isinstance(ref, str))
            else:
                yield from _iter_refs(value, (*path, key))
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from _iter_refs(item, (*path, str(index)))


def _component_of(ref: str) -> Component | None:
    if not ref.startswith("#/"):
        return None
    try:
        segments = parse_pointer(ref[1:])
    except ValueError:
        return None
    if len(segments) >= 3 and segments[0] == "components":
        return segments[1], segments[2]
    return None


def _security_schemes_used(spec: dict[str, Any]) -> Iterator[Component]:
    requirement_lists = [
        spec.get("security"),
        *(operation.get("security") for operation in _operations(spec)),
    ]
    for requirements in requirement_lists:
        for requirement in requirements if isinstance(requirements, list) else ():
            for name in requirement if isinstance(requirement, dict) else ():
                yield "securitySchemes", name


# --- the result must still stand on its own ---------------------------------


def _raise_on_dangling_refs(spec: dict[str, Any], mark: str, where: str = "") -> None:
    """A kept node that refers to a dropped one (marked `mark`) means the spec contradicts itself.

    `where` comes before the referrer's pointer in the problem.
    """
    remedy = "implement the target" if mark == NOT_IMPLEMENTED else "unmark the target"
    problems = [
        Problem(
            f"{ref} is referenced by a kept part of the spec but is not in the filtered spec "
            f"(marked {mark}, or never there)",
            where=where + format_pointer(path),
            remedy=f"upstream: mark the referrer {mark} too, or {remedy}",
        )
        for path, ref in _iter_refs(spec, ())
        if ref.startswith("#") and not _resolves(spec, ref)
    ]
    if problems:
        raise ToolError(*problems)


def _resolves(spec: dict[str, Any], ref: str) -> bool:
    try:
        found, _ = resolve_pointer(spec, ref[1:])
    except ValueError:
        return False
    return found
