"""generated_names and the comparison keep a budget of places (a graph of shared models ends in one line, fast);
the names of a spec parsed before are recalled."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import codegen.api_changes.compare as compare
from codegen.api_changes import client_parser
from codegen.api_changes.compare import compare_specs
from codegen.api_changes.generated_names import (
    GeneratedNames,
    client_surfaces_response_headers,
    generated_names,
    parser_records,
)
from codegen.openapi.operation_map import load_operation_map
from codegen.openapi.plain_yaml import load_yaml
from codegen.openapi.schema_places import MAX_PLACES
from codegen.openapi.sdk_filter import filter_spec
from tests.codegen.hostile_specs import object_graph
from toolkit.errors import ToolError
from toolkit.paths import Project
from toolkit.records import Records

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
    with pytest.raises(ToolError) as caught:
        generated_names(graph, lambda path: path)
    [problem] = caught.value.problems
    assert problem.render() == problem.message
    assert problem.message.startswith(f"the schemas below POST /sandboxes unfold into more than {MAX_PLACES:,} places")


def test_the_comparisons_walk_stops_at_its_budget_too(graph: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compare, "generated_names", lambda spec, key, records=None: GeneratedNames(frozenset(), {}))
    with pytest.raises(ToolError) as caught:
        compare_specs(graph, graph)
    [problem] = caught.value.problems
    assert problem.message.startswith("the schemas below createSandbox request body unfold into more than")


def test_a_few_levels_of_the_same_graph_are_walked_whole() -> None:
    names = generated_names(filtered(object_graph((ROOT / "spec/openapi.yml").read_text(), depth=4)), lambda p: p)
    graph_places = [place for (_, path, place) in names.at if path == "/sandboxes" and ".graph" in place]
    assert len(graph_places) == 1 + 3 + 9 + 27  # each level's class, at every path that reaches it


# --- remembered by spec ------------------------------------------------------------------------


@pytest.fixture
def records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Records:
    monkeypatch.setenv("E2B_CODEGEN_CACHE", str(tmp_path / "cache"))
    return parser_records(Project(ROOT))


def parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per time openapi-python-client's parser reads a spec."""
    calls: list[int] = []
    parse = client_parser.parse_names

    def spy(spec: dict[str, Any], path_key: Any) -> client_parser.ParsedNames:
        calls.append(1)
        return parse(spec, path_key)

    monkeypatch.setattr(client_parser, "parse_names", spy)
    return calls


def test_the_names_of_a_spec_parsed_before_are_recalled(records: Records, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = filtered((ROOT / "spec/openapi.yml").read_text())
    calls = parses(monkeypatch)
    first = generated_names(spec, compare._path_key, records=records)
    again = generated_names(spec, compare._path_key, records=records)
    assert calls == [1]
    assert again == first == generated_names(spec, compare._path_key)
    assert ("GET", "/sandboxes/{}", "200 response") in first.at


def test_another_spec_is_parsed(records: Records, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = filtered((ROOT / "spec/openapi.yml").read_text())
    calls = parses(monkeypatch)
    generated_names(spec, compare._path_key, records=records)
    spec["components"]["schemas"]["SandboxNote"] = {"type": "object", "properties": {"text": {"type": "string"}}}
    assert "SandboxNote" in generated_names(spec, compare._path_key, records=records).classes
    assert calls == [1, 1]


def test_a_remembered_value_that_is_not_names_is_parsed_again(
    records: Records, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = filtered((ROOT / "spec/openapi.yml").read_text())
    calls = parses(monkeypatch)
    values: list[object] = [
        {"classes": [1], "at": []},
        {"classes": [], "at": [["GET", "/x", "200 response"]]},
        [],
        None,
    ]
    for value in values:
        records.remember(json.dumps(spec).encode(), value)
        assert generated_names(spec, compare._path_key, records=records).classes
    assert len(calls) == 4


def test_whether_headers_are_surfaced_is_remembered(records: Records, monkeypatch: pytest.MonkeyPatch) -> None:
    assert client_surfaces_response_headers(records) is client_parser.surfaces_response_headers() is False
    monkeypatch.setattr(client_parser, "surfaces_response_headers", lambda: pytest.fail("asked the parser again"))
    assert client_surfaces_response_headers(records) is False
