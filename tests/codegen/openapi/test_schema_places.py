"""schema_places: the places below a spec's operations, counted against a budget that no real spec nears."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import codegen.openapi.schema_places as schema_places
from codegen.openapi.document import read_spec
from codegen.openapi.schema_places import MAX_PLACES, Budget, first_overflow
from tests.codegen.hostile_specs import object_graph
from tests.fixtures import REAL_SPEC, needs_real_spec
from toolkit.errors import ToolError

ROOT = Path(__file__).resolve().parents[3]


def places_of(spec: dict[str, Any]) -> int:
    """Every place below every operation, without a budget."""
    return sum(
        schema_places._places(spec, root, 10**9) for _, roots in schema_places._operations(spec) for root in roots
    )


def operation(schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "paths": {
            "/things": {
                "post": {
                    "requestBody": {"content": {"application/json": {"schema": schema}}},
                    "responses": {"200": {"description": "ok"}},
                }
            }
        }
    }


def test_each_path_through_shared_schemas_is_a_place() -> None:
    leaf = {"type": "string"}
    spec = operation({"type": "object", "properties": {"a": {"$ref": "#/components/schemas/Pair"}}})
    spec["components"] = {"schemas": {"Pair": {"type": "object", "properties": {"x": leaf, "y": leaf}}}}
    # The body, its property a, and a's x and y.
    assert places_of(spec) == 4


def test_a_cycle_ends_the_path_where_it_closes() -> None:
    spec = operation({"$ref": "#/components/schemas/Node"})
    node = {"type": "object", "properties": {"child": {"$ref": "#/components/schemas/Node"}}}
    spec["components"] = {"schemas": {"Node": node}}
    assert places_of(spec) == 2  # the body, and its child, which is the body again


def test_parameters_headers_items_maps_and_compositions_are_walked() -> None:
    spec = operation({"type": "array", "items": {"allOf": [{"type": "object", "additionalProperties": {}}]}})
    post = spec["paths"]["/things"]["post"]
    post["parameters"] = [{"name": "q", "in": "query", "schema": {"type": "string"}}]
    post["responses"]["200"]["headers"] = {"X-Next": {"schema": {"type": "string"}}}
    assert places_of(spec) == 6


def test_the_real_specs_are_far_under_the_budget() -> None:
    spec = read_spec((ROOT / "spec" / "openapi.yml").read_bytes()).data
    assert places_of(spec) * 10 < MAX_PLACES


@needs_real_spec
def test_the_runtimes_spec_is_far_under_the_budget() -> None:
    assert places_of(read_spec(REAL_SPEC.read_bytes()).data) * 10 < MAX_PLACES


def test_a_graph_of_shared_objects_overflows_at_its_operation_and_the_count_stops_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """3^16 (43 million) places: counting them stops at the budget."""
    from codegen.openapi.plain_yaml import load_yaml

    tree = load_yaml(object_graph((ROOT / "spec" / "openapi.yml").read_text()).encode(), display_path="x")
    resolved: list[object] = []
    real = schema_places._resolve

    def counted(spec: Any, node: object) -> Any:
        resolved.append(node)
        return real(spec, node)

    monkeypatch.setattr(schema_places, "_resolve", counted)
    assert first_overflow(tree.data) == ("paths", "/sandboxes", "post")
    assert len(resolved) < 2 * MAX_PLACES


def test_a_walk_past_its_budget_stops_the_run_in_one_line() -> None:
    budget = Budget()
    for _ in range(MAX_PLACES):
        budget.spend("createSandbox request body")
    with pytest.raises(ToolError) as caught:
        budget.spend("createSandbox request body")
    [problem] = caught.value.problems
    assert problem.render() == problem.message
    assert problem.message.startswith(
        f"the schemas below createSandbox request body unfold into more than {MAX_PLACES:,}"
    )
