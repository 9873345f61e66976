"""Validation keywords compared: which values a schema admits, old side against new.

Each keyword is a bound on the values (`maxLength`, `minimum`, `multipleOf`, `pattern`...):
the comparison says whether the new spec admits fewer values (tightened), more (loosened), or
an incomparable set (changed: a different `pattern`, a `multipleOf` that divides neither way).
`compare.py` turns each answer into a change on the schema's side (`RULES`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from fractions import Fraction
from typing import Any, Literal

__all__ = ["VALIDATION_KEYWORDS", "Verdict", "compare_validation"]

Verdict = Literal["validation tightened", "validation loosened", "validation changed"]

# The keywords read here; every other keyword of a schema is compared elsewhere or is documentation.
VALIDATION_KEYWORDS = (
    "maxLength",
    "minLength",
    "maxItems",
    "minItems",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "pattern",
    "multipleOf",
)

# A bound as a number and whether the bound itself is excluded; None: no bound on that end.
_Bound = tuple[Fraction, bool] | None


def compare_validation(old: Mapping[str, Any], new: Mapping[str, Any]) -> Iterator[tuple[Verdict, str]]:
    """Each validation change between two resolved schemas: its verdict and a detail naming the keyword."""
    for keyword in ("maxLength", "maxItems"):
        yield from _upper(keyword, _count(old.get(keyword)), _count(new.get(keyword)))
    for keyword in ("minLength", "minItems"):
        # No minimum is a minimum of 0: `minLength: 0` added admits what was admitted.
        old_min, new_min = _count(old.get(keyword)) or 0, _count(new.get(keyword)) or 0
        if new_min != old_min:
            verdict: Verdict = "validation tightened" if new_min > old_min else "validation loosened"
            yield verdict, f"{keyword} {old_min} -> {new_min}"
    yield from _range("minimum", _lower_bound(old), _lower_bound(new), lower=True)
    yield from _range("maximum", _upper_bound(old), _upper_bound(new), lower=False)
    yield from _multiple_of(_number(old.get("multipleOf")), _number(new.get("multipleOf")))
    yield from _pattern(old.get("pattern"), new.get("pattern"))


def _number(value: object) -> Fraction | None:
    # bool is an int to Python, never a bound to JSON Schema; a string is not a number either.
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return Fraction(str(value)) if isinstance(value, float) else Fraction(value)
    except (ValueError, OverflowError):  # inf and nan: no bound a comparison can use
        return None


def _count(value: object) -> int | None:
    number = _number(value)
    return int(number) if number is not None and number.denominator == 1 and number >= 0 else None


def _upper(keyword: str, old: int | None, new: int | None) -> Iterator[tuple[Verdict, str]]:
    if old == new:
        return
    if new is not None and (old is None or new < old):
        yield "validation tightened", f"{keyword} {_shown(old)} -> {_shown(new)}"
    else:
        yield "validation loosened", f"{keyword} {_shown(old)} -> {_shown(new)}"


def _shown(value: object) -> str:
    return "none" if value is None else str(value)


def _lower_bound(schema: Mapping[str, Any]) -> _Bound:
    return _bound(schema, "minimum", "exclusiveMinimum", lower=True)


def _upper_bound(schema: Mapping[str, Any]) -> _Bound:
    return _bound(schema, "maximum", "exclusiveMaximum", lower=False)


def _bound(schema: Mapping[str, Any], inclusive: str, exclusive: str, *, lower: bool) -> _Bound:
    """A range's end from both spellings: OpenAPI 3.0's boolean `exclusiveMinimum` and 3.1's number."""
    candidates: list[tuple[Fraction, bool]] = []
    value = _number(schema.get(inclusive))
    if value is not None:
        candidates.append((value, schema.get(exclusive) is True))
    excluded = _number(schema.get(exclusive))
    if excluded is not None:
        candidates.append((excluded, True))
    if not candidates:
        return None
    return max(candidates, key=lambda bound: _tightness(bound, lower=lower))  # both apply: the tighter decides


def _tightness(bound: tuple[Fraction, bool], *, lower: bool) -> tuple[Fraction, bool]:
    """Orders a range's ends by how much they exclude: a lower end as it rises, an upper one as it falls;
    at one value, the end that excludes the value itself is the tighter."""
    value, excluded = bound
    return (value if lower else -value, excluded)


def _range(keyword: str, old: _Bound, new: _Bound, *, lower: bool) -> Iterator[tuple[Verdict, str]]:
    if old == new:
        return
    if new is None:
        tightened = False
    elif old is None:
        tightened = True
    else:
        tightened = _tightness(new, lower=lower) > _tightness(old, lower=lower)
    verdict: Verdict = "validation tightened" if tightened else "validation loosened"
    yield verdict, f"{keyword} {_range_text(old, lower=lower)} -> {_range_text(new, lower=lower)}"


def _range_text(bound: _Bound, *, lower: bool) -> str:
    if bound is None:
        return "none"
    value, excluded = bound
    sign = (">" if lower else "<") + ("" if excluded else "=")
    return f"{sign} {_decimal(value)}"


def _decimal(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else str(float(value))


def _multiple_of(old: Fraction | None, new: Fraction | None) -> Iterator[tuple[Verdict, str]]:
    if old == new or (old is not None and old <= 0) or (new is not None and new <= 0):
        return
    detail = f"multipleOf {_shown(old and _decimal(old))} -> {_shown(new and _decimal(new))}"
    if old is None:
        yield "validation tightened", detail
    elif new is None:
        yield "validation loosened", detail
    elif (new / old).denominator == 1:  # every multiple of the new step is one of the old
        yield "validation tightened", detail
    elif (old / new).denominator == 1:
        yield "validation loosened", detail
    else:
        yield "validation changed", detail


def _pattern(old: object, new: object) -> Iterator[tuple[Verdict, str]]:
    old_text = old if isinstance(old, str) else None
    new_text = new if isinstance(new, str) else None
    if old_text == new_text:
        return
    detail = f"pattern {_shown(old_text)} -> {_shown(new_text)}"
    if old_text is None:
        yield "validation tightened", detail
    elif new_text is None:
        yield "validation loosened", detail
    else:
        # Whether one regular expression admits every string another does is not decided here:
        # a different pattern counts as both, the change that breaks on either side.
        yield "validation changed", detail
