"""Turn raw requests into the generated wire models, or into a 400.

Validation is strict (no "5" for 5, no 1 for true) because the spec is what
the SDK is tested against: a lax server would hide client bugs that the real
API rejects. Integers declared `format: int32` are range-checked here as the
generated models do not carry that bound.
"""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel, ValidationError

from e2b_local_api.errors import ApiError, bad_request

Model = TypeVar("Model", bound=BaseModel)

INT32_MAX = 2**31 - 1


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


def check_not_null(model: BaseModel) -> None:
    """No request field of the implemented operations is nullable in the spec.

    The generated models type optional fields `X | None` (None standing for
    "absent"), so an explicit `null` would otherwise get through.
    """
    for name in sorted(model.model_fields_set):
        if getattr(model, name) is None:
            raise bad_request(f"{name}: must not be null")


def check_int32(model: BaseModel) -> None:
    """Every request integer in the implemented operations is an int32."""
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, int) and not isinstance(value, bool) and value > INT32_MAX:
            raise bad_request(f"{name}: must be at most {INT32_MAX} (int32)")


def parse_int(value: str, name: str, *, minimum: int, maximum: int) -> int:
    try:
        number = int(value, 10)
    except ValueError:
        raise bad_request(f"{name}: expected an integer, got {value!r}") from None
    if not minimum <= number <= maximum:
        raise bad_request(f"{name}: must be between {minimum} and {maximum}, got {number}")
    return number


__all__ = ["ApiError", "describe", "parse_body", "parse_int"]
