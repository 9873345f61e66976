"""Validation keywords: each bound tightened, loosened or changed, in both spellings of a range's ends."""

from __future__ import annotations

from typing import Any

import pytest

from codegen.api_changes.validation import VALIDATION_KEYWORDS, compare_validation

TIGHTENED, LOOSENED, CHANGED = "validation tightened", "validation loosened", "validation changed"

CASES: list[tuple[dict[str, Any], dict[str, Any], list[tuple[str, str]]]] = [
    # (old schema, new schema, [(verdict, detail)])
    ({"maxLength": 64}, {"maxLength": 32}, [(TIGHTENED, "maxLength 64 -> 32")]),
    ({"maxLength": 32}, {"maxLength": 64}, [(LOOSENED, "maxLength 32 -> 64")]),
    ({}, {"maxLength": 64}, [(TIGHTENED, "maxLength none -> 64")]),
    ({"maxLength": 64}, {}, [(LOOSENED, "maxLength 64 -> none")]),
    ({"maxItems": 10}, {"maxItems": 5}, [(TIGHTENED, "maxItems 10 -> 5")]),
    ({"minLength": 1}, {"minLength": 3}, [(TIGHTENED, "minLength 1 -> 3")]),
    ({"minItems": 2}, {}, [(LOOSENED, "minItems 2 -> 0")]),
    # No minimum length is a minimum of 0: saying so admits what was admitted.
    ({}, {"minLength": 0}, []),
    ({"minimum": 1}, {"minimum": 5}, [(TIGHTENED, "minimum >= 1 -> >= 5")]),
    ({"minimum": 5}, {"minimum": 1}, [(LOOSENED, "minimum >= 5 -> >= 1")]),
    ({"maximum": 100}, {"maximum": 50}, [(TIGHTENED, "maximum <= 100 -> <= 50")]),
    ({"maximum": 100}, {}, [(LOOSENED, "maximum <= 100 -> none")]),
    ({"maximum": 1.5}, {"maximum": 1.25}, [(TIGHTENED, "maximum <= 1.5 -> <= 1.25")]),
    # OpenAPI 3.0: exclusiveMinimum is a flag on minimum; excluding the end itself tightens.
    ({"minimum": 0}, {"minimum": 0, "exclusiveMinimum": True}, [(TIGHTENED, "minimum >= 0 -> > 0")]),
    ({"maximum": 9, "exclusiveMaximum": True}, {"maximum": 9}, [(LOOSENED, "maximum < 9 -> <= 9")]),
    # A flag without its minimum bounds nothing.
    ({}, {"exclusiveMinimum": True}, []),
    # OpenAPI 3.1: exclusiveMinimum is a number of its own; one spelling for the other is no change.
    ({"minimum": 0, "exclusiveMinimum": True}, {"exclusiveMinimum": 0}, []),
    ({"exclusiveMaximum": 10}, {"exclusiveMaximum": 8}, [(TIGHTENED, "maximum < 10 -> < 8")]),
    ({"exclusiveMaximum": 10}, {"maximum": 10}, [(LOOSENED, "maximum < 10 -> <= 10")]),
    # Both spellings at once: the tighter end decides.
    ({"minimum": 1}, {"minimum": 1, "exclusiveMinimum": 3}, [(TIGHTENED, "minimum >= 1 -> > 3")]),
    ({"multipleOf": 2}, {"multipleOf": 4}, [(TIGHTENED, "multipleOf 2 -> 4")]),
    ({"multipleOf": 4}, {"multipleOf": 2}, [(LOOSENED, "multipleOf 4 -> 2")]),
    ({"multipleOf": 0.5}, {"multipleOf": 0.25}, [(LOOSENED, "multipleOf 0.5 -> 0.25")]),
    ({"multipleOf": 2}, {"multipleOf": 3}, [(CHANGED, "multipleOf 2 -> 3")]),
    ({}, {"multipleOf": 3}, [(TIGHTENED, "multipleOf none -> 3")]),
    ({"pattern": "^[a-z]+$"}, {"pattern": "^[a-z0-9]+$"}, [(CHANGED, "pattern ^[a-z]+$ -> ^[a-z0-9]+$")]),
    ({}, {"pattern": "^a"}, [(TIGHTENED, "pattern none -> ^a")]),
    ({"pattern": "^a"}, {}, [(LOOSENED, "pattern ^a -> none")]),
    # Values no validator accepts as bounds are not read as bounds.
    ({"maxLength": True}, {"maxLength": 3}, [(TIGHTENED, "maxLength none -> 3")]),
    ({"maximum": "10"}, {"maximum": "5"}, []),
    ({"maximum": float("inf")}, {}, []),
    ({"multipleOf": 0}, {"multipleOf": 2}, []),
    # Several keywords, one answer each.
    (
        {"minLength": 1, "maxLength": 10},
        {"minLength": 2, "maxLength": 20},
        [(LOOSENED, "maxLength 10 -> 20"), (TIGHTENED, "minLength 1 -> 2")],
    ),
]


@pytest.mark.parametrize(("old", "new", "expected"), CASES, ids=[f"{o} -> {n}" for o, n, _ in CASES])
def test_each_bound(old: dict[str, Any], new: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert list(compare_validation(old, new)) == expected


def test_every_keyword_is_read() -> None:
    """Each keyword alone, added to a schema without it, is an answer (none is silently skipped)."""
    values = {"pattern": "^a", "exclusiveMinimum": 0, "exclusiveMaximum": 0}
    for keyword in VALIDATION_KEYWORDS:
        found = list(compare_validation({}, {keyword: values.get(keyword, 3)}))
        assert [verdict for verdict, _ in found] == [TIGHTENED], keyword


def test_the_same_bounds_are_no_change() -> None:
    schema = {keyword: 3 for keyword in VALIDATION_KEYWORDS} | {"pattern": "^a", "exclusiveMinimum": True}
    assert list(compare_validation(schema, dict(schema))) == []
