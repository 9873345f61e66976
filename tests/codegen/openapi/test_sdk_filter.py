"""filter_spec: tags in, x-not-implemented out, unused components gone, input untouched; filter_internal for envd."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from codegen.openapi.document import load_spec, validate_openapi
from codegen.openapi.sdk_filter import filter_internal, filter_spec
from tests.fixtures import REAL_SPEC, needs_real_spec
from toolkit.errors import ToolError
from toolkit.paths import ENVD_DIR

SDK_TAGS = ["sandboxes", "snapshots", "templates", "tags", "volumes", "secrets"]


def ok(schema_ref: str | None = None) -> dict[str, Any]:
    response: dict[str, Any] = {"description": "ok"}
    if schema_ref:
        response["content"] = {"application/json": {"schema": {"$ref": schema_ref}}}
    return {"200": response}


def make_spec() -> dict[str, Any]:
    return {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "security": [{"ApiKey": []}],
        "tags": [{"name": "sandboxes"}, {"name": "teams"}, {"name": "unused"}],
        "paths": {
            "/sandboxes": {
                "get": {
                    "tags": ["sandboxes"],
                    "responses": ok("#/components/schemas/SandboxList"),
                },
                "post": {
                    "tags": ["sandboxes"],
                    "x-not-implemented": True,
                    "responses": ok("#/components/schemas/NewSandbox"),
                },
            },
            "/sandboxes/{id}": {
                "parameters": [{"$ref": "#/components/parameters/id"}],
                "delete": {
                    "tags": ["sandboxes"],
                    "security": [{"Admin": []}],
                    "parameters": [
                        {"name": "keep", "in": "query", "schema": {"type": "boolean"}},
                        {
                            "name": "later",
                            "in": "query",
                            "x-not-implemented": True,
                            "schema": {"type": "string"},
                        },
                    ],
                    "responses": {"204": {"description": "gone"}},
                },
            },
            "/teams": {
                "get": {"tags": ["teams"], "responses": ok("#/components/schemas/Team")},
            },
            "/health": {"get": {"responses": {"204": {"description": "up"}}}},
            "/only-unimplemented": {
                "get": {"tags": ["sandboxes"], "x-not-implemented": True, "responses": ok()},
            },
        },
        "components": {
            "securitySchemes": {
                "ApiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
                "Admin": {"type": "apiKey", "in": "header", "name": "X-Admin"},
                "TeamOnly": {"type": "apiKey", "in": "header", "name": "X-Team"},
            },
            "parameters": {
                "id": {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}},
                "unusedParam": {"name": "u", "in": "query", "schema": {"type": "string"}},
            },
            "schemas": {
                "SandboxList": {
                    "type": "array",
                    "items": {"$ref": "#/components/schemas/Sandbox"},
                },
                "Sandbox": {
                    "type": "object",
                    "required": ["id", "secretPlan", "node"],
                    "properties": {
                        "id": {"type": "string"},
                        "node": {"$ref": "#/components/schemas/Node"},
                        "secretPlan": {"type": "string", "x-not-implemented": True},
                        # Marked on both ends, or the kept property would dangle.
                        "metrics": {
                            "$ref": "#/components/schemas/Metrics",
                            "x-not-implemented": True,
                        },
                    },
                },
                # Node and Peer refer to each other: the walk must not loop.
                "Node": {"type": "object", "properties": {"peer": {"$ref": "#/components/schemas/Peer"}}},
                "Peer": {"type": "object", "properties": {"node": {"$ref": "#/components/schemas/Node"}}},
                "Metrics": {"type": "object", "x-not-implemented": True},
                "NewSandbox": {"type": "object"},
                "Team": {"type": "object", "properties": {"owner": {"$ref": "#/components/schemas/User"}}},
                "User": {"type": "object"},
                # A cycle nothing kept reaches is removed whole.
                "LoopA": {"properties": {"b": {"$ref": "#/components/schemas/LoopB"}}},
                "LoopB": {"properties": {"a": {"$ref": "#/components/schemas/LoopA"}}},
            },
        },
    }


def test_input_is_not_mutated() -> None:
    spec = make_spec()
    before = copy.deepcopy(spec)
    result = filter_spec(spec, tags=["sandboxes"])
    assert spec == before
    assert result is not spec
    assert result["components"] is not spec["components"]


def test_only_operations_with_a_wanted_tag_are_kept() -> None:
    result = filter_spec(make_spec(), tags=["sandboxes"])

    assert list(result["paths"]) == ["/sandboxes", "/sandboxes/{id}"]
    assert list(result["paths"]["/sandboxes"]) == ["get"]
    assert result["tags"] == [{"name": "sandboxes"}]


def test_several_tags_keep_key_order() -> None:
    result = filter_spec(make_spec(), tags=["teams", "sandboxes"])

    assert list(result["paths"]) == ["/sandboxes", "/sandboxes/{id}", "/teams"]
    assert result["tags"] == [{"name": "sandboxes"}, {"name": "teams"}]
    assert list(result["components"]["schemas"]) == ["SandboxList", "Sandbox", "Node", "Peer", "Team", "User"]


def test_not_implemented_operation_and_parameter_are_dropped() -> None:
    result = filter_spec(make_spec(), tags=["sandboxes"])

    assert "post" not in result["paths"]["/sandboxes"]
    # A path item whose only operation was not implemented goes with it.
    assert "/only-unimplemented" not in result["paths"]
    parameters = result["paths"]["/sandboxes/{id}"]["delete"]["parameters"]
    assert [parameter["name"] for parameter in parameters] == ["keep"]


def test_not_implemented_property_is_dropped_and_no_longer_required() -> None:
    sandbox = filter_spec(make_spec(), tags=["sandboxes"])["components"]["schemas"]["Sandbox"]

    assert list(sandbox["properties"]) == ["id", "node"]  # secretPlan and metrics gone
    assert sandbox["required"] == ["id", "node"]


def test_not_implemented_schema_is_dropped_with_its_references() -> None:
    schemas = filter_spec(make_spec(), tags=["sandboxes"])["components"]["schemas"]

    assert "Metrics" not in schemas
    assert "metrics" not in schemas["Sandbox"]["properties"]


def test_unused_components_are_removed_transitively() -> None:
    components = filter_spec(make_spec(), tags=["sandboxes"])["components"]

    assert list(components["schemas"]) == ["SandboxList", "Sandbox", "Node", "Peer"]
    assert list(components["parameters"]) == ["id"]
    # ApiKey from top-level security, Admin from the kept delete operation.
    assert list(components["securitySchemes"]) == ["ApiKey", "Admin"]


def test_a_cycle_of_refs_does_not_loop_and_unreached_cycles_go() -> None:
    spec = make_spec()
    spec["paths"]["/loop"] = {"get": {"tags": ["loop"], "responses": ok("#/components/schemas/LoopA")}}

    kept = filter_spec(spec, tags=["loop"])["components"]["schemas"]
    dropped = filter_spec(spec, tags=["sandboxes"])["components"]["schemas"]

    assert list(kept) == ["LoopA", "LoopB"]
    assert "LoopA" not in dropped and "LoopB" not in dropped


def test_discriminator_mapping_keeps_its_targets() -> None:
    spec = make_spec()
    spec["components"]["schemas"]["Node"]["discriminator"] = {
        "propertyName": "kind",
        "mapping": {"user": "#/components/schemas/User"},
    }

    schemas = filter_spec(spec, tags=["sandboxes"])["components"]["schemas"]

    assert "User" in schemas


def test_empty_component_sections_are_removed() -> None:
    spec = make_spec()
    spec["paths"]["/sandboxes/{id}"]["parameters"] = []

    components = filter_spec(spec, tags=["sandboxes"])["components"]

    assert "parameters" not in components


def test_a_kept_ref_to_a_not_implemented_schema_is_an_error() -> None:
    spec = make_spec()
    spec["components"]["schemas"]["Node"]["x-not-implemented"] = True

    with pytest.raises(ToolError) as caught:
        filter_spec(spec, tags=["sandboxes"])

    # Only the kept referrer: Peer went unused once Node was gone.
    assert [problem.where for problem in caught.value.problems] == ["/components/schemas/Sandbox/properties/node"]
    assert "#/components/schemas/Node" in caught.value.problems[0].message


def test_filtering_is_deterministic() -> None:
    assert filter_spec(make_spec(), tags=["sandboxes"]) == filter_spec(make_spec(), tags=["sandboxes"])


def all_values(node: Any, key: str) -> list[Any]:
    if isinstance(node, dict):
        here = [node[key]] if key in node else []
        return here + [found for value in node.values() for found in all_values(value, key)]
    if isinstance(node, list):
        return [found for item in node for found in all_values(item, key)]
    return []


@needs_real_spec
def test_the_real_spec_filtered_for_the_python_sdk() -> None:
    full = load_spec(REAL_SPEC.read_bytes()).data

    result = filter_spec(full, tags=SDK_TAGS)

    assert True not in all_values(result, "x-not-implemented")
    for operation in (
        op for item in result["paths"].values() for op in item.values() if isinstance(op, dict) and "responses" in op
    ):
        assert set(operation["tags"]) & set(SDK_TAGS)
    # No unused component: each one is referenced from outside its own definition.
    for section, entries in result["components"].items():
        for name in entries:
            if section == "securitySchemes":
                used = {
                    scheme
                    for requirement in all_values(result, "security")
                    for entry in requirement
                    for scheme in entry
                }
                assert name in used, name
                continue
            target = f"#/components/{section}/{name}"
            elsewhere = {key: value for key, value in result.items() if key != "components"}
            others = {
                (other_section, other): body
                for other_section, bodies in result["components"].items()
                for other, body in bodies.items()
                if (other_section, other) != (section, name)
            }
            assert target in all_values(elsewhere, "$ref") + all_values(list(others.values()), "$ref"), target
    assert len(result["paths"]) < len(full["paths"])
    assert validate_openapi(result) == []


# --- envd's HTTP API: x-internal out --------------------------------------------

ENVD_HTTP = f"{ENVD_DIR}/envd.yaml"
ROOT = Path(__file__).resolve().parents[3]
# What envd.yaml marks as the orchestrator's own (issue 41): the SDK never calls them.
INTERNAL_PATHS = {"/init", "/freeze", "/unfreeze", "/collapse", "/fsfreeze", "/fsthaw"}


def test_the_synced_envd_yaml_loses_the_orchestrators_operations_and_what_only_they_use() -> None:
    full = load_spec((ROOT / ENVD_HTTP).read_bytes()).data
    before = copy.deepcopy(full)

    result = filter_internal(full, display_path=ENVD_HTTP)

    assert full == before  # the input untouched
    assert INTERNAL_PATHS <= set(full["paths"])
    assert set(result["paths"]) == set(full["paths"]) - INTERNAL_PATHS
    assert {"get", "post"} <= set(result["paths"]["/files"]) and "get" in result["paths"]["/health"]
    assert True not in all_values(result, "x-internal")
    # Schemas only the internal operations used are gone; the public ones' stay.
    schemas = set(result["components"]["schemas"])
    assert not schemas & {"FreezeResult", "CollapseResult", "VolumeMount"}
    assert {"EntryInfo", "Error"} <= schemas
    assert validate_openapi(result) == []


def test_a_path_keeps_its_public_operations_and_goes_when_none_is_left() -> None:
    spec = make_spec()
    spec["paths"]["/sandboxes"]["get"]["x-internal"] = True
    spec["paths"]["/teams"]["get"]["x-internal"] = True

    paths = filter_internal(spec, display_path="envd.yaml")["paths"]

    assert "/teams" not in paths
    assert "get" not in paths["/sandboxes"] and "post" in paths["/sandboxes"]


def test_a_public_operation_that_refers_to_an_internal_schema_is_an_error_naming_the_file() -> None:
    spec = make_spec()
    spec["components"]["schemas"]["Node"]["x-internal"] = True

    with pytest.raises(ToolError) as caught:
        filter_internal(spec, display_path="spec/envd/envd.yaml")

    assert [problem.where for problem in caught.value.problems] == [
        "spec/envd/envd.yaml#/components/schemas/Sandbox/properties/node"
    ]
    assert "marked x-internal" in caught.value.problems[0].message
