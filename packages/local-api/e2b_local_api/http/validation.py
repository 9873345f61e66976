"""Turn raw requests into the generated wire models, or into a 400.

Strict (no "5" for 5, no 1 for true), with `format: int32` range-checked here. What only one spec
shape declares is read from the JSON object (`optional_bool`, `string_map`), never from a model field.

How it works, and why: docs/maintainers/packages.md, "packages/local-api/e2b_local_api/http/validation.py".
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any, TypeVar

from pydantic import BaseModel, RootModel, ValidationError

from e2b_local_api.http.errors import ApiError, bad_request

Model = TypeVar("Model", bound=BaseModel)

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1

# Request fields whose schema says `nullable: true` (SandboxEgressProxyConfig):
# an explicit null there means "none", not a mistake.
NULLABLE_FIELDS = frozenset({"egressProxy"})


def media_type(value: str | None) -> str:
    """The media type of a Content-Type value, parameters dropped, lower-cased ("" for none)."""
    return (value or "").split(";", 1)[0].strip().lower()


def describe(error: ValidationError) -> str:
    """One line per problem, `location: what is wrong`, for the Error message."""
    parts = []
    for item in error.errors(include_url=False):
        where = ".".join(str(p) for p in item["loc"]) or "body"
        parts.append(f"{where}: {item['msg']}")
    return "; ".join(parts)


def parse_body(raw: bytes, model: type[Model], *, content_type: str | None, optional: bool = False) -> Model:
    """Validate a JSON body against `model`; an empty body is allowed only if `optional`.

    The spec declares `application/json` request bodies only; a body sent as
    anything else (a form, `text/plain`, no type at all) is refused, not guessed at.
    """
    if not raw.strip():
        if optional:
            return model()
        raise bad_request("request body is required")
    if media_type(content_type) != "application/json":
        raise bad_request(f"Content-Type must be application/json, got {content_type or 'none'!r}")
    try:
        parsed = model.model_validate_json(raw, strict=True)
    except ValidationError as exc:
        raise bad_request(f"invalid request body: {describe(exc)}") from None
    check_not_null(parsed)
    check_int32(parsed)
    return parsed


def body_object(raw: bytes) -> dict[str, Any]:
    """The JSON object of a body `parse_body` accepted ({} for an absent optional body)."""
    if not raw.strip():
        return {}
    value = json.loads(raw)
    assert isinstance(value, dict), "parse_body accepts objects only"
    return value


def check_not_null(model: BaseModel, where: str = "") -> None:
    """No request field of the implemented operations is nullable in the spec, but `NULLABLE_FIELDS`.

    The generated models type optional fields `X | None` (None standing for
    "absent"), so an explicit `null` would otherwise get through, also inside
    nested objects (`network.allowOut: null`).
    """
    for name in sorted(model.model_fields_set):
        value = getattr(model, name)
        path = f"{where}{name}"
        if value is None:
            if name not in NULLABLE_FIELDS:
                raise bad_request(f"{path}: must not be null")
        else:
            _check_nested(value, path)


def _check_nested(value: object, path: str) -> None:
    if isinstance(value, RootModel):
        _check_nested(value.root, path)
    elif isinstance(value, BaseModel):
        check_not_null(value, f"{path}.")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_nested(item, f"{path}.{index}")
    elif isinstance(value, dict):
        for key, item in value.items():
            if item is None:
                raise bad_request(f"{path}.{key}: must not be null")
            _check_nested(item, f"{path}.{key}")


def check_int32(model: BaseModel) -> None:
    """Every request integer in the implemented operations is an int32."""
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, int) and not isinstance(value, bool) and value > INT32_MAX:
            raise bad_request(f"{name}: must be at most {INT32_MAX} (int32)")


def unwrap(value: object) -> object:
    """The value inside a generated RootModel (one shape wraps `enabled`, `tokens`, maps), else the value."""
    return value.root if isinstance(value, RootModel) else value


def optional_bool(body: Mapping[str, Any], name: str, *, default: bool) -> bool:
    """A boolean body field read from the JSON object, for fields not every spec shape's model has."""
    if name not in body:
        return default
    value = body[name]
    if not isinstance(value, bool):
        raise bad_request(f"{name}: expected a boolean, got {json.dumps(value)}")
    return value


def string_map(value: object, name: str) -> dict[str, str]:
    """A string-to-string object (metadata, envVars): one spec shape's model types it `Any`."""
    value = unwrap(value)
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise bad_request(f"{name}: expected an object of strings")
    return dict(value)


# --- query parameters ----------------------------------------------------------


def query_value(params: Any, name: str) -> str | None:
    """A single-valued query parameter; given twice is a 400 rather than a silent pick of one."""
    values: list[str] = params.getlist(name)
    if len(values) > 1:
        raise bad_request(f"{name}: given {len(values)} times, expected once")
    return values[0] if values else None


def parse_int(value: str, name: str, *, minimum: int, maximum: int) -> int:
    try:
        number = int(value, 10)
    except ValueError:
        raise bad_request(f"{name}: expected an integer, got {value!r}") from None
    if not minimum <= number <= maximum:
        raise bad_request(f"{name}: must be between {minimum} and {maximum}, got {number}")
    return number


def parse_datetime(value: str, name: str) -> datetime:
    """An RFC 3339 date-time: with a time and an offset (`Z` or `+01:00`); a date alone is refused.

    RFC 3339 allows a lower-case `t` and `z` and a leap second (`:60`), which
    `datetime.fromisoformat` does not: they are read as `T`, `Z` and `:59`.
    """
    text = _LEAP_SECOND.sub(r"\g<1>59", value.upper())
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None or "T" not in text:
        raise bad_request(f"{name}: expected an RFC 3339 date-time with an offset, got {value!r}")
    return parsed


_LEAP_SECOND = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:)60")


__all__ = [
    "ApiError",
    "body_object",
    "describe",
    "optional_bool",
    "parse_body",
    "parse_datetime",
    "parse_int",
    "query_value",
    "string_map",
    "unwrap",
]
