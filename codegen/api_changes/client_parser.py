"""What openapi-python-client's parser makes of a spec: the class names by place, and the response's fields.

How it works, and why: docs/maintainers/design.md, "codegen/api_changes/generated_names.py".
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from functools import cache, partial
from pathlib import Path
from typing import Any

import attrs
from openapi_python_client.config import Config, ConfigFile, MetaType
from openapi_python_client.parser.openapi import GeneratorData
from openapi_python_client.parser.properties import EnumProperty, LiteralEnumProperty, ModelProperty, Property
from openapi_python_client.parser.properties.list_property import ListProperty
from openapi_python_client.parser.properties.union import UnionProperty
from openapi_python_client.parser.responses import Response

from codegen.generation.generators import CLIENT_CONFIG
from codegen.openapi.schema_places import Budget

# (METHOD, path with its parameters blanked, place inside the operation):
# ("POST", "/sandboxes/{}/connect", "request body .metadata").
Place = tuple[str, str, str]
# The classes the generated client holds, and which one each place in the spec uses. Plain data:
# `generated_names`, which remembers it, imports this module and not the other way round.
ParsedNames = tuple[frozenset[str], dict[Place, str]]


@cache
def _config() -> Config:
    path = Path(__file__).resolve().parents[1] / CLIENT_CONFIG
    settings = ConfigFile.load_from_path(path)
    return Config.from_sources(settings, MetaType.NONE, str(path), "utf-8", False, None)


def parse_names(spec: dict[str, Any], path_key: Callable[[str], str]) -> ParsedNames:
    """Parse `spec` as the generator does; `path_key` blanks path parameters as the comparison does."""
    # The generator reads the spec from the JSON file the pipeline writes (status codes become text there).
    data = GeneratorData.from_dict(json.loads(json.dumps(spec)), config=_config())
    if not isinstance(data, GeneratorData):
        # The pipeline refuses such a spec later, with the generator's own words.
        return frozenset(), {}
    classes = frozenset(str(prop.class_info.name) for prop in (*data.models, *data.enums))
    at: dict[Place, str] = {}
    budget = Budget()
    walked: set[tuple[str, str]] = set()
    for collection in data.endpoint_collections_by_tag.values():
        for endpoint in collection.endpoints:
            operation = (str(endpoint.method).upper(), path_key(_text(endpoint.path)))
            if operation in walked:
                continue  # an operation with several tags is in several collections
            walked.add(operation)
            below = f"{operation[0]} {_text(endpoint.path)}"
            for base, prop in _places(endpoint):
                for place, name in _classes_below(prop, base, "", frozenset(), partial(budget.spend, below)):
                    at.setdefault((*operation, place), name)
    return classes, at


def _places(endpoint: Any) -> Iterator[tuple[str, Any]]:
    """Each top-level property of an operation, named as the comparison names it."""
    # The comparison follows the JSON body when there are several media types.
    for body in sorted(endpoint.bodies, key=lambda body: body.body_type != "json"):
        yield "request body", body.prop
    for response in endpoint.responses:
        yield f"{response.status_code.pattern} response", response.prop
    for where in ("path", "query", "header", "cookie"):
        for param in getattr(endpoint, f"{where}_parameters"):
            yield f"{where} parameter {_text(param.name)}", param


def _classes_below(
    prop: Any, base: str, path: str, busy: frozenset[int], spend: Callable[[], None]
) -> Iterator[tuple[str, str]]:
    """(place, class name) for `prop` and every property under it; `spend` is called at each place."""
    spend()
    place = f"{base} {path}" if path else base
    if isinstance(prop, UnionProperty):
        # `allOf: [$ref]` + nullable, or `X | None`: the class of its one non-None member.
        members = [inner for inner in prop.inner_properties if type(inner).__name__ != "NoneProperty"]
        if len(members) == 1:
            yield from _classes_below(members[0], base, path, busy, spend)
    elif isinstance(prop, ListProperty):
        yield from _classes_below(prop.inner_property, base, path + "[]", busy, spend)
    elif isinstance(prop, EnumProperty | LiteralEnumProperty):
        yield place, str(prop.class_info.name)
    elif isinstance(prop, ModelProperty) and id(prop) not in busy:
        yield place, str(prop.class_info.name)
        busy = busy | {id(prop)}
        for child in (*(prop.required_properties or ()), *(prop.optional_properties or ())):
            yield from _classes_below(child, base, f"{path}.{_text(child.name)}", busy, spend)
        if isinstance(prop.additional_properties, Property):
            yield from _classes_below(prop.additional_properties, base, path + "{*}", busy, spend)


def _text(value: Any) -> str:
    # The generator wraps spec text so that it is never rendered unescaped by mistake.
    return str(value.get_untrusted_value()) if hasattr(value, "get_untrusted_value") else str(value)


def surfaces_response_headers() -> bool:
    """Whether the parser reads a response's documented headers, so that the generated client surfaces them.

    openapi-python-client's `Response` (0.29.1: status, property, source and the raw data) has no
    field for headers, and its functions hand back the raw `Response.headers`, documented or not.
    """
    return any("header" in field.name for field in attrs.fields(Response))
