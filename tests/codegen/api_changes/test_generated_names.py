"""generated_names and the comparison keep a budget of places: a graph of shared models ends in one line, fast."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import codegen.api_changes.compare as compare
from codegen.api_changes.compare import compare_specs
from codegen.api_changes.generated_names import GeneratedNames, generated_names
from codegen.errors import CodegenError
from codegen.openapi.operation_map import load_operation_map
from codegen.openapi.plain_yaml import load_yaml
from codegen.openapi.schema_places import MAX_PLACES
from codegen.openapi.sdk_filter import filter_spec
from tests.codegen.hostile_specs import object_graph

ROOT = Path(__file__).resolve().parents[3]


def filtered(text: str) -> dict[str, Any]:
    """As bump hands the report its specs, without the reading step that refuses this one first."""
    operations = load_operation_map(ROOT / "spec/operations.yml", display_path="spec/operations.yml")
    spec = load_yaml(text.encode(), display_path="spec/openapi.yml").data
    return filter_spec(spec, tags=("sandboxes", "snapshots", "templates"), operations=operations)


@pytest.fixture(scope="module")
def graph() -> dict[str, Any]:
    return filtered(object_graph((ROOT / "spec/openapi.yml").read_text()))


def test_the_names_walk_stops_at_its_budget_in_one_line(graph: dict[str, Any]) -> None:
    """16 levels of 3 arrays of the next: 43 million places through the generator's linked models."""
    with pytest.raises(CodegenError) as caught:
        generated_names(graph, lambda path: path)
    [problem] = caught.value.problems
    assert problem.render() == problem.message
    assert problem.message.startswith(f"the schemas below POST /sandboxes unfold into more than {MAX_PLACES:,} places")


def test_the_comparisons_walk_stops_at_its_budget_too(graph: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compare, "generated_names", lambda spec, key: GeneratedNames(frozenset(), {}))
    with pytest.raises(CodegenError) as caught:
        compare_specs(graph, graph)
    [problem] = caught.value.problems
    assert problem.message.startswith("the schemas below createSandbox request body unfold into more than")


def test_a_few_levels_of_the_same_graph_are_walked_whole() -> None:
    names = generated_names(filtered(object_graph((ROOT / "spec/openapi.yml").read_text(), depth=4)), lambda p: p)
    graph_places = [place for (_, path, place) in names.at if path == "/sandboxes" and ".graph" in place]
    assert len(graph_places) == 1 + 3 + 9 + 27  # each level's class, at every path that reaches it
