"""The API change report: each detected kind, each classification rule."""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from codegen.api_changes.compare import (
    RULES,
    WHY_ERROR_CODE_REMOVED,
    WHY_ERROR_RESPONSE_REMOVED,
    WHY_HEADER_NOT_SURFACED,
    WHY_MODEL_REMOVED,
    WHY_MODEL_RENAMED,
    WHY_OTHER_CREDENTIAL,
    WHY_RESPONSE_ENUM_VALUE_ADDED,
    WHY_RESPONSE_ENUM_VALUE_REMOVED,
    WHY_RESPONSE_MADE_NULLABLE,
    WHY_RESPONSE_MADE_OPTIONAL,
    WHY_SDK_CREDENTIAL_REFUSED,
    WHY_SECURITY,
    WHY_UPSTREAM_RENAME,
    WHY_VALIDATION_CHANGED_REQUEST,
    WHY_VALIDATION_CHANGED_RESPONSE,
    WHY_VALIDATION_LOOSENED_RESPONSE,
    WHY_VALIDATION_TIGHTENED_RESPONSE,
    ApiChange,
    ApiChangeReport,
    client_surfaces_response_headers,
    compare_specs,
    render_report,
)
from codegen.openapi.operation_map import UPSTREAM_OPERATION_ID
from tests.fixtures import REAL_SPEC, needs_real_spec

PAUSE = "/sandboxes/{sandboxID}/pause"
SANDBOX = "/sandboxes/{sandboxID}"


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def json_body(schema: dict[str, Any], description: str = "OK") -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def make_spec() -> dict[str, Any]:
    """A small spec with the shapes the comparison has to walk."""
    return {
        "openapi": "3.0.0",
        "info": {"title": "API", "version": "1"},
        "paths": {
            PAUSE: {
                "post": {
                    "operationId": "pauseSandbox",
                    "tags": ["sandboxes"],
                    "summary": "Pause a sandbox",
                    "parameters": [
                        {"$ref": "#/components/parameters/sandboxID"},
                        {
                            "name": "mode",
                            "in": "query",
                            "required": False,
                            "schema": {"type": "string", "enum": ["fast", "safe"]},
                        },
                    ],
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": ref("SandboxPauseRequest")}},
                    },
                    "responses": {
                        "200": json_body(ref("SandboxPauseResult"), "Paused"),
                        "409": {"$ref": "#/components/responses/409"},
                    },
                }
            },
            SANDBOX: {
                "get": {
                    "operationId": "getSandbox",
                    "tags": ["sandboxes"],
                    "parameters": [{"$ref": "#/components/parameters/sandboxID"}],
                    "responses": {"200": json_body(ref("Sandbox"))},
                },
                "delete": {
                    "operationId": "killSandbox",
                    "tags": ["sandboxes"],
                    "parameters": [{"$ref": "#/components/parameters/sandboxID"}],
                    "responses": {"204": {"description": "Killed"}},
                },
            },
        },
        "components": {
            "parameters": {
                "sandboxID": {
                    "name": "sandboxID",
                    "in": "path",
                    "required": True,
                    "schema": {"type": "string"},
                }
            },
            "responses": {"409": json_body(ref("Error"), "Conflict")},
            "schemas": {
                "SandboxPauseRequest": {
                    "type": "object",
                    "properties": {
                        "memory": {"type": "boolean", "description": "Keep memory"},
                        "reason": ref("PauseReason"),
                    },
                },
                "PauseReason": {"type": "string", "enum": ["user", "idle"]},
                "SandboxPauseResult": {
                    "type": "object",
                    "required": ["sandboxID", "state"],
                    "properties": {"sandboxID": {"type": "string"}, "state": ref("SandboxState")},
                },
                "SandboxState": {"type": "string", "enum": ["running", "paused"]},
                "Sandbox": {
                    "type": "object",
                    "required": ["sandboxID", "state"],
                    "properties": {
                        "sandboxID": {"type": "string"},
                        "state": ref("SandboxState"),
                        "metadata": {
                            "type": "object",
                            "properties": {"env": {"type": "string"}},
                        },
                        # A $ref cycle: a sandbox lists its forks.
                        "forks": {"type": "array", "items": ref("Sandbox")},
                    },
                },
                "Error": {
                    "type": "object",
                    "required": ["code", "message"],
                    "properties": {
                        "code": {"type": "integer"},
                        "message": {"type": "string"},
                        "error_code": {
                            "type": "string",
                            "x-error-codes": {
                                "sandbox_not_found": "The sandbox does not exist.",
                            },
                        },
                    },
                },
            },
        },
    }


def schemas(spec: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = spec["components"]["schemas"]
    return result


def pause_op(spec: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = spec["paths"][PAUSE]["post"]
    return result


def changed(mutate: Any) -> ApiChangeReport:
    new = make_spec()
    mutate(new)
    return compare_specs(make_spec(), new)


def only(report: ApiChangeReport) -> ApiChange:
    assert len(report.changes) == 1, report.changes
    return report.changes[0]


def summary(report: ApiChangeReport) -> list[tuple[str, str, str, str]]:
    return [(c.level, c.kind, c.location, c.detail) for c in report.changes]


# --- level of the whole report ------------------------------------------------


def test_no_change_is_level_none() -> None:
    report = compare_specs(make_spec(), make_spec())
    assert report.level == "none"
    assert report.changes == ()
    assert report.forcing == ()
    assert report.description_changes == 0
    assert render_report(report, old_ref="abc1234", new_ref="abc1234") == (
        "# API changes: abc1234 -> abc1234\n\nSemver: **none** — no API changes\n"
    )


def test_description_only_changes_are_patch_and_counted() -> None:
    def mutate(spec: dict[str, Any]) -> None:
        pause_op(spec)["summary"] = "Pause a running sandbox"
        pause_op(spec)["description"] = "Added text"
        schemas(spec)["SandboxPauseRequest"]["properties"]["memory"]["description"] = "Keep RAM"
        # Re-wrapping is not a change.
        spec["components"]["responses"]["409"]["description"] = "  Conflict\n"

    report = changed(mutate)
    assert report.changes == ()
    assert report.description_changes == 3
    assert report.level == "patch"
    assert render_report(report, old_ref="abc1234", new_ref="def5678").splitlines() == [
        "# API changes: abc1234 -> def5678",
        "",
        "Semver: **patch** — forced by: 3 description-only changes",
        "",
        "## Other",
        "- 3 description-only changes",
    ]


def test_new_optional_property_and_new_operation_are_minor() -> None:
    def mutate(spec: dict[str, Any]) -> None:
        schemas(spec)["SandboxPauseRequest"]["properties"]["force"] = {"type": "boolean"}
        spec["paths"]["/sandboxes/{sandboxID}/resume"] = {
            "post": {"operationId": "resumeSandbox", "responses": {"204": {"description": "ok"}}}
        }

    report = changed(mutate)
    assert report.level == "minor"
    assert summary(report) == [
        ("minor", "property added", "pauseSandbox request body .force", "optional"),
        ("minor", "operation added", "resumeSandbox", "POST /sandboxes/{sandboxID}/resume"),
    ]
    assert render_report(report, old_ref="abc1234", new_ref="def5678").splitlines() == [
        "# API changes: abc1234 -> def5678",
        "",
        "Semver: **minor** — forced by: property added `pauseSandbox request body .force`; "
        "operation added `resumeSandbox`",
        "",
        "## New (minor)",
        "- property added: `pauseSandbox request body .force` (optional)",
        "- operation added: `resumeSandbox` (POST /sandboxes/{sandboxID}/resume)",
    ]


def test_removed_operation_is_major() -> None:
    report = changed(lambda spec: spec["paths"][SANDBOX].pop("delete"))
    assert summary(report) == [("major", "operation removed", "killSandbox", "DELETE /sandboxes/{sandboxID}")]
    assert report.level == "major"
    assert report.forcing == report.changes


def test_forcing_lists_only_the_changes_at_the_report_level() -> None:
    def mutate(spec: dict[str, Any]) -> None:
        spec["paths"][SANDBOX].pop("delete")
        schemas(spec)["SandboxPauseRequest"]["properties"]["force"] = {"type": "boolean"}

    report = changed(mutate)
    assert [c.kind for c in report.forcing] == ["operation removed"]
    assert len(report.changes) == 2


def test_render_shows_sections_in_order_and_flagged_reasons_once() -> None:
    def mutate(spec: dict[str, Any]) -> None:
        spec["paths"][SANDBOX].pop("delete")
        schemas(spec)["SandboxState"]["enum"].append("snapshotting")
        schemas(spec)["Error"]["properties"]["error_code"]["x-error-codes"]["x_new"] = "New."
        pause_op(spec)["summary"] = "Pause"

    text = render_report(changed(mutate), old_ref="abc1234", new_ref="def5678")
    assert text.splitlines() == [
        "# API changes: abc1234 -> def5678",
        "",
        "Semver: **major** — forced by: enum value added `getSandbox 200 response .state`; "
        "operation removed `killSandbox`; enum value added `pauseSandbox 200 response .state`",
        "",
        "## Breaking (major)",
        '- enum value added: `getSandbox 200 response .state` ("snapshotting") [1]',
        "- operation removed: `killSandbox` (DELETE /sandboxes/{sandboxID})",
        '- enum value added: `pauseSandbox 200 response .state` ("snapshotting") [1]',
        "",
        "## New (minor)",
        "- error code added: `x_new` (New.)",
        "",
        "## Other",
        "- 1 description-only change",
        "",
        "## Notes",
        f"1. {WHY_RESPONSE_ENUM_VALUE_ADDED}",
    ]


def test_render_is_deterministic_whatever_the_order_of_changes() -> None:
    def mutate(spec: dict[str, Any]) -> None:
        spec["paths"][SANDBOX].pop("delete")
        schemas(spec)["SandboxState"]["enum"].append("snapshotting")
        schemas(spec)["PauseReason"]["enum"].append("manual")

    report = changed(mutate)
    shuffled = list(report.changes)
    random.Random(4).shuffle(shuffled)
    again = ApiChangeReport(tuple(shuffled), report.description_changes)
    assert render_report(again, old_ref="a", new_ref="b") == render_report(report, old_ref="a", new_ref="b")


# --- operations -----------------------------------------------------------------


def test_deprecated_operation_is_minor() -> None:
    report = changed(lambda spec: pause_op(spec).update(deprecated=True))
    assert summary(report) == [("minor", "operation deprecated", "pauseSandbox", f"POST {PAUSE}")]


def test_renamed_operation_id_is_major_and_renames_its_inline_classes() -> None:
    report = changed(lambda spec: pause_op(spec).update(operationId="pause"))
    assert summary(report) == [
        ("major", "operation renamed", "pause", "pauseSandbox -> pause"),
        # The inline enum of its `mode` parameter is named after the operation.
        ("major", "model renamed", "pause query parameter mode", "PauseSandboxMode -> PauseMode"),
    ]


def test_an_upstream_operation_id_rename_is_listed_but_changes_nothing() -> None:
    # After the filter step names operations from spec/operations.yml, only the
    # upstream's own id (kept as x-upstream-operation-id) differs.
    change = only(changed(lambda spec: pause_op(spec).update({UPSTREAM_OPERATION_ID: "sandboxPause"})))
    assert (change.level, change.kind, change.location, change.detail, change.why) == (
        "none",
        "upstream operationId renamed",
        "pauseSandbox",
        "(none) -> sandboxPause",
        WHY_UPSTREAM_RENAME,
    )
    report = changed(lambda spec: pause_op(spec).update({UPSTREAM_OPERATION_ID: "sandboxPause"}))
    assert report.level == "none" and report.forcing == ()
    text = render_report(report, old_ref="a", new_ref="b")
    assert "Semver: **none** — no API changes" in text
    assert "## Upstream only (no SDK change)\n- upstream operationId renamed: `pauseSandbox`" in text


def test_error_codes_in_prose_are_compared_like_x_error_codes() -> None:
    def prose(*extra: str) -> Any:
        def edit(spec: dict[str, Any]) -> None:
            field = schemas(spec)["Error"]["properties"]["error_code"]
            codes = [*field.pop("x-error-codes"), *extra]
            field["description"] = "Not a closed set; initial values: " + ", ".join(codes) + "."

        return edit

    old, new = make_spec(), make_spec()
    prose()(old)
    prose("x_new")(new)
    report = compare_specs(old, new)
    assert summary(report) == [("minor", "error code added", "x_new", "")]
    assert report.description_changes == 1  # the sentence itself changed too


def test_renamed_path_parameter_is_not_a_removed_operation() -> None:
    def mutate(spec: dict[str, Any]) -> None:
        spec["paths"]["/sandboxes/{id}"] = spec["paths"].pop(SANDBOX)
        param = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
        for op in spec["paths"]["/sandboxes/{id}"].values():
            op["parameters"] = [param]

    kinds = {(c.kind, c.location) for c in changed(mutate).changes}
    assert ("parameter removed", "getSandbox path parameter sandboxID") in kinds
    assert ("parameter added", "getSandbox path parameter id") in kinds
    assert not any(kind.startswith("operation") for kind, _ in kinds)


# --- parameters ------------------------------------------------------------------


def test_parameter_added_optional_is_minor_and_required_is_major() -> None:
    def mutate(spec: dict[str, Any]) -> None:
        pause_op(spec)["parameters"] += [
            {"name": "wait", "in": "query", "schema": {"type": "boolean"}},
            {"name": "X-Reason", "in": "header", "required": True, "schema": {"type": "string"}},
        ]

    assert summary(changed(mutate)) == [
        ("major", "parameter added", "pauseSandbox header parameter X-Reason", "required"),
        ("minor", "parameter added", "pauseSandbox query parameter wait", "optional"),
    ]


def test_parameter_removed_is_major_and_so_is_the_class_it_took_along() -> None:
    assert summary(changed(lambda spec: pause_op(spec)["parameters"].pop())) == [
        ("major", "model removed", "PauseSandboxMode", "was used at POST /sandboxes/{}/pause query parameter mode"),
        ("major", "parameter removed", "pauseSandbox query parameter mode", ""),
    ]


def test_parameter_type_changed_is_major() -> None:
    report = changed(lambda spec: pause_op(spec)["parameters"][1].update(schema={"type": "integer"}))
    assert summary(report) == [
        ("major", "model removed", "PauseSandboxMode", "was used at POST /sandboxes/{}/pause query parameter mode"),
        ("major", "type changed", "pauseSandbox query parameter mode", "string enum -> integer"),
    ]


def test_parameter_made_required_is_major_and_made_optional_is_minor() -> None:
    made_required = only(changed(lambda spec: pause_op(spec)["parameters"][1].update(required=True)))
    assert (made_required.level, made_required.kind) == ("major", "made required")

    def make_path_param_optional(spec: dict[str, Any]) -> None:
        spec["components"]["parameters"]["sandboxID"]["required"] = False

    report = changed(make_path_param_optional)
    assert {(c.level, c.kind) for c in report.changes if c.kind != "model removed"} == {("minor", "made optional")}
    assert (
        len([c for c in report.changes if c.kind == "made optional"]) == 3
    )  # the shared parameter, once per operation
    # openapi-python-client refuses an optional path parameter and leaves the
    # operation out of the client: its classes are gone, and the report says so.
    assert [(c.kind, c.location) for c in report.changes if c.level == "major"] == [
        ("model removed", "PauseSandboxMode")
    ]


def test_parameter_enum_value_added_is_minor_and_removed_is_major() -> None:
    def mutate(spec: dict[str, Any]) -> None:
        pause_op(spec)["parameters"][1]["schema"]["enum"] = ["fast", "gentle"]

    assert summary(changed(mutate)) == [
        ("major", "enum value removed", "pauseSandbox query parameter mode", '"safe"'),
        ("minor", "enum value added", "pauseSandbox query parameter mode", '"gentle"'),
    ]


# --- request bodies ---------------------------------------------------------------


def test_request_property_made_required_is_major() -> None:
    change = only(changed(lambda spec: schemas(spec)["SandboxPauseRequest"].update(required=["memory"])))
    assert (change.level, change.kind, change.location) == (
        "major",
        "made required",
        "pauseSandbox request body .memory",
    )


def test_request_property_made_optional_is_minor() -> None:
    old = make_spec()
    schemas(old)["SandboxPauseRequest"]["required"] = ["memory"]
    change = only(compare_specs(old, make_spec()))
    assert (change.level, change.kind) == ("minor", "made optional")


def test_request_property_added_required_is_major() -> None:
    def mutate(spec: dict[str, Any]) -> None:
        request = schemas(spec)["SandboxPauseRequest"]
        request["properties"]["force"] = {"type": "boolean"}
        request["required"] = ["force"]

    assert summary(changed(mutate)) == [("major", "property added", "pauseSandbox request body .force", "required")]


def test_request_property_removed_is_major() -> None:
    change = only(changed(lambda spec: schemas(spec)["SandboxPauseRequest"]["properties"].pop("memory")))
    assert (change.level, change.kind, change.location) == (
        "major",
        "property removed",
        "pauseSandbox request body .memory",
    )


def test_narrowed_request_enum_is_major() -> None:
    change = only(changed(lambda spec: schemas(spec)["PauseReason"]["enum"].remove("idle")))
    assert (change.level, change.kind, change.location, change.detail) == (
        "major",
        "enum value removed",
        "pauseSandbox request body .reason",
        '"idle"',
    )


def test_widened_request_enum_is_minor() -> None:
    change = only(changed(lambda spec: schemas(spec)["PauseReason"]["enum"].append("manual")))
    assert (change.level, change.kind, change.why) == ("minor", "enum value added", None)


def test_request_body_made_required_is_major_and_optional_is_minor() -> None:
    old = make_spec()
    pause_op(old)["requestBody"]["required"] = False
    assert summary(compare_specs(old, make_spec())) == [
        ("major", "request body made required", "pauseSandbox request body", "")
    ]
    assert summary(compare_specs(make_spec(), old)) == [
        ("minor", "request body made optional", "pauseSandbox request body", "")
    ]


def test_request_body_added_and_removed() -> None:
    def add_body(spec: dict[str, Any]) -> None:
        spec["paths"][SANDBOX]["delete"]["requestBody"] = {
            "content": {"application/json": {"schema": ref("SandboxPauseRequest")}}
        }

    assert summary(changed(add_body)) == [("minor", "request body added", "killSandbox request body", "optional")]
    removed = only(changed(lambda spec: pause_op(spec).pop("requestBody")))
    assert (removed.level, removed.kind) == ("major", "request body removed")


# --- response bodies --------------------------------------------------------------


def test_new_response_enum_value_is_major_and_explained() -> None:
    report = changed(lambda spec: schemas(spec)["SandboxState"]["enum"].append("snapshotting"))
    assert report.level == "major"
    assert [(c.level, c.kind, c.location, c.detail, c.why) for c in report.changes] == [
        (
            "major",
            "enum value added",
            "getSandbox 200 response .state",
            '"snapshotting"',
            WHY_RESPONSE_ENUM_VALUE_ADDED,
        ),
        (
            "major",
            "enum value added",
            "pauseSandbox 200 response .state",
            '"snapshotting"',
            WHY_RESPONSE_ENUM_VALUE_ADDED,
        ),
    ]
    assert "raise" in WHY_RESPONSE_ENUM_VALUE_ADDED


def test_removed_response_enum_value_is_minor_with_a_note() -> None:
    report = changed(lambda spec: schemas(spec)["SandboxState"]["enum"].remove("paused"))
    assert {(c.level, c.kind, c.why) for c in report.changes} == {
        ("minor", "enum value removed", WHY_RESPONSE_ENUM_VALUE_REMOVED)
    }


def test_changed_type_is_major() -> None:
    def mutate(spec: dict[str, Any]) -> None:
        schemas(spec)["Sandbox"]["properties"]["metadata"]["properties"]["env"] = {
            "type": "object",
            "additionalProperties": {"type": "string"},
        }

    assert summary(changed(mutate)) == [
        ("major", "type changed", "getSandbox 200 response .metadata.env", "string -> map")
    ]


def test_format_that_changes_the_python_type_is_a_type_change() -> None:
    def mutate(spec: dict[str, Any]) -> None:
        schemas(spec)["Sandbox"]["properties"]["sandboxID"]["format"] = "uuid"

    change = only(changed(mutate))
    assert (change.kind, change.detail) == ("type changed", "string -> string(uuid)")
    untouched = changed(lambda spec: schemas(spec)["Error"]["properties"]["code"].update(format="int64"))
    assert untouched.changes == ()


def test_response_property_added_is_minor_and_removed_is_major() -> None:
    def add(spec: dict[str, Any]) -> None:
        schemas(spec)["Sandbox"]["properties"]["cpu"] = {"type": "integer"}

    assert summary(changed(add)) == [("minor", "property added", "getSandbox 200 response .cpu", "optional")]
    # The property's model is used nowhere else: the filter drops it, and the generated class goes too.
    assert summary(changed(lambda spec: schemas(spec)["Sandbox"]["properties"].pop("metadata"))) == [
        ("major", "model removed", "SandboxMetadata", "was used at GET /sandboxes/{} 200 response .metadata"),
        ("major", "property removed", "getSandbox 200 response .metadata", ""),
    ]


def test_response_property_made_optional_is_major_and_explained() -> None:
    change = only(changed(lambda spec: schemas(spec)["Sandbox"].update(required=["sandboxID"])))
    assert (change.level, change.kind, change.location, change.why) == (
        "major",
        "made optional",
        "getSandbox 200 response .state",
        WHY_RESPONSE_MADE_OPTIONAL,
    )


def test_response_property_made_nullable_is_major() -> None:
    change = only(changed(lambda spec: schemas(spec)["Sandbox"]["properties"]["sandboxID"].update(nullable=True)))
    assert (change.level, change.kind, change.why) == (
        "major",
        "made nullable",
        WHY_RESPONSE_MADE_NULLABLE,
    )


def test_nested_array_items_are_compared() -> None:
    def mutate(spec: dict[str, Any]) -> None:
        schemas(spec)["Sandbox"]["properties"]["forks"]["items"] = ref("SandboxPauseResult")

    report = changed(mutate)
    assert (
        "model renamed",
        "getSandbox 200 response .forks[]",
        "Sandbox -> SandboxPauseResult",
    ) in {(c.kind, c.location, c.detail) for c in report.changes}
    assert report.level == "major"


# --- response codes ---------------------------------------------------------------


def test_response_code_added_is_minor() -> None:
    def mutate(spec: dict[str, Any]) -> None:
        pause_op(spec)["responses"]["404"] = json_body(ref("Error"), "Not found")

    assert summary(changed(mutate)) == [("minor", "response code added", "pauseSandbox 404 response", "")]


def test_response_code_removed_is_major_for_2xx_and_minor_otherwise() -> None:
    success = only(changed(lambda spec: pause_op(spec)["responses"].pop("200")))
    assert (success.level, success.kind) == ("major", "response code removed")
    error = only(changed(lambda spec: pause_op(spec)["responses"].pop("409")))
    assert (error.level, error.kind, error.why) == (
        "minor",
        "response code removed",
        WHY_ERROR_RESPONSE_REMOVED,
    )


# --- documented error codes ---------------------------------------------------------


def codes(spec: dict[str, Any]) -> dict[str, str]:
    result: dict[str, str] = schemas(spec)["Error"]["properties"]["error_code"]["x-error-codes"]
    return result


def test_added_error_code_is_minor() -> None:
    def mutate(spec: dict[str, Any]) -> None:
        codes(spec)["sandbox_pause_refused"] = "The sandbox cannot be paused now."

    report = changed(mutate)
    assert report.level == "minor"
    assert summary(report) == [
        ("minor", "error code added", "sandbox_pause_refused", "The sandbox cannot be paused now.")
    ]


def test_removed_error_code_is_major_and_reworded_one_is_a_description_change() -> None:
    removed = only(changed(lambda spec: codes(spec).clear()))
    assert (removed.level, removed.kind, removed.location, removed.why) == (
        "major",
        "error code removed",
        "sandbox_not_found",
        WHY_ERROR_CODE_REMOVED,
    )
    reworded = changed(lambda spec: codes(spec).update(sandbox_not_found="Gone."))
    assert (reworded.changes, reworded.description_changes) == ((), 1)


# --- robustness --------------------------------------------------------------------


def spec_with_loops() -> dict[str, Any]:
    spec = make_spec()
    # Besides Sandbox.forks: a pure $ref loop and a self-referencing allOf.
    schemas(spec)["Loop"] = ref("Loop2")
    schemas(spec)["Loop2"] = ref("Loop")
    schemas(spec)["Self"] = {"type": "object", "allOf": [ref("Self")]}
    schemas(spec)["Sandbox"]["properties"]["loop"] = ref("Loop")
    schemas(spec)["Sandbox"]["properties"]["self"] = ref("Self")
    return spec


def test_ref_cycle_terminates_and_reports_once() -> None:
    new = spec_with_loops()
    schemas(new)["Sandbox"]["properties"]["cpu"] = {"type": "integer"}
    assert summary(compare_specs(spec_with_loops(), new)) == [
        ("minor", "property added", "getSandbox 200 response .cpu", "optional")
    ]


# --- the real spec -----------------------------------------------------------------


def load_fixture() -> dict[str, Any]:
    data: dict[str, Any] = YAML(typ="safe").load(REAL_SPEC.read_text(encoding="utf-8"))
    return data


@needs_real_spec
def test_real_spec_against_itself_has_no_changes() -> None:
    report = compare_specs(load_fixture(), load_fixture())
    assert (report.level, report.changes, report.description_changes) == ("none", (), 0)


@needs_real_spec
def test_real_spec_with_a_path_deleted_is_major_naming_it() -> None:
    old = load_fixture()
    new = copy.deepcopy(old)
    del new["paths"]["/sandboxes/{sandboxID}"]
    report = compare_specs(old, new)
    assert report.level == "major"
    removed = {(c.kind, c.location) for c in report.forcing}
    assert removed == {
        ("operation removed", "GET /sandboxes/{sandboxID}"),
        ("operation removed", "DELETE /sandboxes/{sandboxID}"),
    }
    text = render_report(report, old_ref="f89f8c3", new_ref="0000000")
    assert "- operation removed: `DELETE /sandboxes/{sandboxID}`" in text


def test_unquoted_status_codes_match_quoted_ones() -> None:
    new = make_spec()
    responses = pause_op(new)["responses"]
    responses[200] = responses.pop("200")
    assert compare_specs(make_spec(), new).changes == ()


# --- generated names ---------------------------------------------------------------


def inline_pause_request(spec: dict[str, Any]) -> None:
    """The pause body's schema written inline instead of through its component: the same JSON."""
    body = pause_op(spec)["requestBody"]["content"]["application/json"]
    body["schema"] = copy.deepcopy(schemas(spec)["SandboxPauseRequest"])


def test_a_component_inlined_renames_the_generated_class() -> None:
    report = changed(inline_pause_request)
    assert summary(report) == [
        ("major", "model renamed", "pauseSandbox request body", "SandboxPauseRequest -> PauseSandboxBody"),
    ]
    assert report.changes[0].why == WHY_MODEL_RENAMED


def test_an_inline_schema_extracted_into_a_component_renames_the_class_back() -> None:
    old = make_spec()
    inline_pause_request(old)
    report = compare_specs(old, make_spec())
    assert summary(report) == [
        ("major", "model renamed", "pauseSandbox request body", "PauseSandboxBody -> SandboxPauseRequest"),
    ]


def test_a_renamed_component_is_one_rename_not_a_removal() -> None:
    def rename(spec: dict[str, Any]) -> None:
        schemas(spec)["PauseOptions"] = schemas(spec).pop("SandboxPauseRequest")
        pause_op(spec)["requestBody"]["content"]["application/json"]["schema"] = ref("PauseOptions")

    assert summary(changed(rename)) == [
        ("major", "model renamed", "pauseSandbox request body", "SandboxPauseRequest -> PauseOptions"),
    ]


def test_a_class_that_disappears_without_a_rename_is_removed() -> None:
    def drop_metadata_everywhere(spec: dict[str, Any]) -> None:
        schemas(spec)["Sandbox"]["properties"].pop("metadata")

    removed = [c for c in changed(drop_metadata_everywhere).changes if c.kind == "model removed"]
    assert [(c.level, c.location, c.why) for c in removed] == [("major", "SandboxMetadata", WHY_MODEL_REMOVED)]


# --- response headers --------------------------------------------------------------


def with_header(spec: dict[str, Any], name: str = "X-Next-Token", schema: Any = None) -> dict[str, Any]:
    response = spec["paths"][SANDBOX]["get"]["responses"]["200"]
    response.setdefault("headers", {})[name] = {"schema": schema or {"type": "string"}}
    return spec


def test_the_generated_client_does_not_surface_documented_response_headers() -> None:
    """openapi-python-client 0.29.1 parses no response header: its functions hand back the raw headers."""
    assert client_surfaces_response_headers() is False


def test_a_response_header_the_client_surfaces_added_is_minor_and_removed_is_major() -> None:
    added = only(compare_specs(make_spec(), with_header(make_spec()), surfaced_headers=True))
    assert (added.level, added.kind, added.location) == (
        "minor",
        "response header added",
        "getSandbox 200 response header X-Next-Token",
    )
    removed = only(compare_specs(with_header(make_spec()), make_spec(), surfaced_headers=True))
    assert (removed.level, removed.kind, removed.location) == (
        "major",
        "response header removed",
        "getSandbox 200 response header X-Next-Token",
    )


def test_a_response_header_the_client_does_not_surface_is_patch_either_way() -> None:
    """The SDK gains nothing from a header its client does not read (it reads X-Next-Token by name already)."""
    for old, new, kind in (
        (make_spec(), with_header(make_spec()), "response header added"),
        (with_header(make_spec()), make_spec(), "response header removed"),
    ):
        report = compare_specs(old, new)
        change = only(report)
        assert (change.level, change.kind, change.location, change.why) == (
            "patch",
            kind,
            "getSandbox 200 response header X-Next-Token",
            WHY_HEADER_NOT_SURFACED,
        )
        assert report.level == "patch"


def test_a_retyped_response_header_is_major_when_surfaced_and_a_description_change_when_not() -> None:
    old, new = with_header(make_spec()), with_header(make_spec(), schema={"type": "integer"})
    assert summary(compare_specs(old, new, surfaced_headers=True)) == [
        ("major", "type changed", "getSandbox 200 response header X-Next-Token", "string -> integer")
    ]
    report = compare_specs(old, new)
    assert (report.changes, report.description_changes, report.level) == ((), 1, "patch")


def test_response_header_names_are_case_insensitive() -> None:
    for surfaced in (True, False):
        report = compare_specs(
            with_header(make_spec()), with_header(make_spec(), "x-next-token"), surfaced_headers=surfaced
        )
        assert (report.changes, report.description_changes) == ((), 0)


def test_a_header_through_a_component_ref_is_compared_by_its_target() -> None:
    def via_component(spec: dict[str, Any], type_: str) -> dict[str, Any]:
        spec["components"]["headers"] = {"Next": {"schema": {"type": type_}}}
        spec["paths"][SANDBOX]["get"]["responses"]["200"]["headers"] = {"X-Next": {"$ref": "#/components/headers/Next"}}
        return spec

    report = compare_specs(
        via_component(make_spec(), "string"), via_component(make_spec(), "boolean"), surfaced_headers=True
    )
    assert summary(report) == [("major", "type changed", "getSandbox 200 response header X-Next", "string -> boolean")]


# --- security ----------------------------------------------------------------------


def secured(spec: dict[str, Any], *alternatives: dict[str, list[str]], where: str = "kill") -> dict[str, Any]:
    """Give killSandbox (or, with where="doc", the whole document) these security alternatives."""
    spec["components"]["securitySchemes"] = {
        "ApiKeyAuth": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
        "TokenAuth": {"type": "http", "scheme": "bearer"},
        "TeamAuth": {"type": "apiKey", "in": "header", "name": "X-Team-ID"},
    }
    target = spec if where == "doc" else spec["paths"][SANDBOX]["delete"]
    target["security"] = list(alternatives)
    return spec


API_KEY: dict[str, list[str]] = {"ApiKeyAuth": []}
TOKEN: dict[str, list[str]] = {"TokenAuth": []}
TEAM: dict[str, list[str]] = {"TeamAuth": []}
ANONYMOUS: dict[str, list[str]] = {}
SDK = frozenset({"ApiKeyAuth"})  # the credential spec/contract.yml names

# Without the SDK's credential (a contract that names none): every caller counts.
SECURITY_CASES = [
    # (old alternatives, new alternatives, [(level, kind, location suffix, detail)])
    ([API_KEY, TOKEN], [TOKEN], [("major", "security scheme removed", "ApiKeyAuth", "ApiKeyAuth")]),
    (
        [API_KEY],
        [{**API_KEY, **TOKEN}],
        [
            (
                "major",
                "security requirement added",
                "ApiKeyAuth",
                "ApiKeyAuth no longer suffices; now one of: ApiKeyAuth + TokenAuth",
            )
        ],
    ),
    (
        [ANONYMOUS, API_KEY],
        [API_KEY],
        [
            (
                "major",
                "security requirement added",
                "no credentials",
                "no credentials no longer suffices; now one of: ApiKeyAuth",
            )
        ],
    ),
    ([API_KEY], [API_KEY, TOKEN], [("minor", "security alternative added", "TokenAuth", "TokenAuth")]),
    ([API_KEY], [API_KEY, ANONYMOUS], [("minor", "security made optional", "", "an alternative with no credentials")]),
    # A smaller alternative still fits every caller who sent both.
    ([{**API_KEY, **TOKEN}], [API_KEY], [("minor", "security alternative added", "ApiKeyAuth", "ApiKeyAuth")]),
    ([API_KEY, TOKEN], [TOKEN, API_KEY], []),
]


@pytest.mark.parametrize(("old", "new", "expected"), SECURITY_CASES)
def test_security_alternatives_without_the_sdk_credential(
    old: list[dict[str, list[str]]], new: list[dict[str, list[str]]], expected: list[tuple[str, str, str, str]]
) -> None:
    report = compare_specs(secured(make_spec(), *old), secured(make_spec(), *new))
    assert [(c.level, c.kind, c.location, c.detail) for c in report.changes] == [
        (level, kind, f"killSandbox security {at}".rstrip(), detail) for level, kind, at, detail in expected
    ]
    assert all(c.why == WHY_SECURITY for c in report.changes if c.level == "major")


def test_an_operation_without_its_own_security_inherits_the_documents() -> None:
    old = secured(make_spec(), API_KEY, where="doc")
    new = secured(make_spec(), API_KEY, where="doc")
    new["paths"][SANDBOX]["delete"]["security"] = [TOKEN]
    assert summary(compare_specs(old, new)) == [
        ("major", "security scheme removed", "killSandbox security ApiKeyAuth", "ApiKeyAuth")
    ]
    assert summary(compare_specs(old, new, credentials=SDK)) == [
        ("major", "security scheme removed", "killSandbox security ApiKeyAuth", "now one of: TokenAuth")
    ]


def test_a_scheme_sent_differently_is_major() -> None:
    new = secured(make_spec(), API_KEY)
    new["components"]["securitySchemes"]["ApiKeyAuth"]["name"] = "Authorization"
    for credentials in (None, SDK):
        (change,) = compare_specs(secured(make_spec(), API_KEY), new, credentials=credentials).changes
        assert (change.level, change.kind, change.location) == (
            "major",
            "security scheme changed",
            "killSandbox security ApiKeyAuth",
        )
        assert change.detail == (
            "ApiKeyAuth: type=apiKey in=header name=X-API-Key -> type=apiKey in=header name=Authorization"
        )


# With the SDK's credential: what counts is whether every SDK operation still accepts it.
ONE_OP = "in 1 operation (killSandbox)"
SDK_SECURITY_CASES = [
    # (old alternatives, new alternatives, [(level, kind, location, detail, why)])
    pytest.param(
        [API_KEY, TOKEN, {**TOKEN, **TEAM}],
        [API_KEY],
        [
            ("none", "security scheme removed", "TeamAuth", ONE_OP, WHY_OTHER_CREDENTIAL),
            ("none", "security scheme removed", "TokenAuth", ONE_OP, WHY_OTHER_CREDENTIAL),
        ],
        id="alternatives the SDK does not use removed",
    ),
    pytest.param(
        [API_KEY],
        [API_KEY, TOKEN, {**TOKEN, **TEAM}],
        [
            ("none", "security alternative added", "TeamAuth + TokenAuth", ONE_OP, WHY_OTHER_CREDENTIAL),
            ("none", "security alternative added", "TokenAuth", ONE_OP, WHY_OTHER_CREDENTIAL),
        ],
        id="alternatives the SDK cannot use added",
    ),
    pytest.param(
        [ANONYMOUS, API_KEY],
        [API_KEY],
        [
            (
                "none",
                "security requirement added",
                "no credentials",
                f"no credentials no longer suffices; now one of: ApiKeyAuth; {ONE_OP}",
                WHY_OTHER_CREDENTIAL,
            )
        ],
        id="auth made required: the SDK always sends its key",
    ),
    pytest.param(
        [API_KEY, TOKEN],
        [TOKEN],
        [
            (
                "major",
                "security scheme removed",
                "killSandbox security ApiKeyAuth",
                "now one of: TokenAuth",
                WHY_SDK_CREDENTIAL_REFUSED,
            )
        ],
        id="the SDK's scheme removed",
    ),
    pytest.param(
        [API_KEY],
        [{**API_KEY, **TEAM}],
        [
            (
                "major",
                "security requirement added",
                "killSandbox security ApiKeyAuth",
                "ApiKeyAuth no longer suffices; now one of: ApiKeyAuth + TeamAuth",
                WHY_SDK_CREDENTIAL_REFUSED,
            )
        ],
        id="the SDK's credential no longer enough",
    ),
    pytest.param(
        [TOKEN],
        [TOKEN, API_KEY],
        [("minor", "security alternative added", "killSandbox security ApiKeyAuth", "", None)],
        id="the SDK's credential newly accepted",
    ),
    pytest.param(
        [API_KEY],
        [API_KEY, ANONYMOUS],
        [("minor", "security made optional", "killSandbox security", "an alternative with no credentials", None)],
        id="auth made optional",
    ),
    pytest.param([API_KEY, TOKEN], [TOKEN, API_KEY], [], id="reordered"),
]


@pytest.mark.parametrize(("old", "new", "expected"), SDK_SECURITY_CASES)
def test_security_alternatives_with_the_sdk_credential(
    old: list[dict[str, list[str]]],
    new: list[dict[str, list[str]]],
    expected: list[tuple[str, str, str, str, str | None]],
) -> None:
    report = compare_specs(secured(make_spec(), *old), secured(make_spec(), *new), credentials=SDK)
    assert [(c.level, c.kind, c.location, c.detail, c.why) for c in report.changes] == expected


def with_header_name(spec: dict[str, Any], scheme: str, name: str) -> dict[str, Any]:
    spec["components"]["securitySchemes"][scheme]["name"] = name
    return spec


@pytest.mark.parametrize("credentials", [None, SDK])
@pytest.mark.parametrize(("scheme", "name"), [("TeamAuth", "X-Team-Id"), ("ApiKeyAuth", "x-api-key")])
def test_a_case_only_rename_of_a_scheme_s_header_is_no_change(
    credentials: frozenset[str] | None, scheme: str, name: str
) -> None:
    """HTTP reads header names in any case (RFC 9110 5.1): X-Team-ID and X-Team-Id are one header."""
    old = secured(make_spec(), API_KEY, {**TOKEN, **TEAM})
    new = with_header_name(secured(make_spec(), API_KEY, {**TOKEN, **TEAM}), scheme, name)
    report = compare_specs(old, new, credentials=credentials)
    assert (report.changes, report.level) == ((), "none")


def test_a_bearer_scheme_s_case_is_no_change_but_a_query_key_s_is() -> None:
    old = secured(make_spec(), API_KEY, TOKEN)
    new = secured(make_spec(), API_KEY, TOKEN)
    new["components"]["securitySchemes"]["TokenAuth"]["scheme"] = "Bearer"
    assert compare_specs(old, new).changes == ()
    for spec in (old, new):
        spec["components"]["securitySchemes"]["ApiKeyAuth"]["in"] = "query"
    with_header_name(new, "ApiKeyAuth", "x-api-key")
    assert [c.kind for c in compare_specs(old, new).changes] == ["security scheme changed"]


def test_a_scheme_the_sdk_does_not_send_changed_is_a_note() -> None:
    old = secured(make_spec(), API_KEY, {**TOKEN, **TEAM})
    new = with_header_name(secured(make_spec(), API_KEY, {**TOKEN, **TEAM}), "TeamAuth", "X-Org-ID")
    assert summary(compare_specs(old, new, credentials=SDK)) == [
        (
            "none",
            "security scheme changed",
            "TeamAuth",
            f"TeamAuth: type=apiKey in=header name=X-Team-ID -> type=apiKey in=header name=X-Org-ID; {ONE_OP}",
        )
    ]


def test_notes_gather_the_operations_and_stay_out_of_the_level() -> None:
    """Two schemes the SDK does not send, dropped from every operation: one note each, naming the operations."""
    old = secured(make_spec(), API_KEY, {**TOKEN, **TEAM}, where="doc")
    new = secured(make_spec(), API_KEY, where="doc")
    report = compare_specs(old, new, credentials=SDK)
    assert report.level == "none" and report.forcing == ()
    ops = "in 3 operations (getSandbox, killSandbox, pauseSandbox)"
    assert summary(report) == [
        ("none", "security scheme removed", "TeamAuth", ops),
        ("none", "security scheme removed", "TokenAuth", ops),
    ]
    text = render_report(report, old_ref="a", new_ref="b")
    assert "Semver: **none** — no API changes" in text
    assert f"## Upstream only (no SDK change)\n- security scheme removed: `TeamAuth` ({ops}) [1]" in text
    assert f"1. {WHY_OTHER_CREDENTIAL}" in text


def test_the_forced_by_line_names_each_scheme() -> None:
    """An SDK that sends two schemes at once, both dropped: two lines, not one line twice."""
    old = secured(make_spec(), {**API_KEY, **TEAM}, TOKEN)
    new = secured(make_spec(), TOKEN)
    report = compare_specs(old, new, credentials={"ApiKeyAuth", "TeamAuth"})
    text = render_report(report, old_ref="a", new_ref="b")
    assert (
        "forced by: security scheme removed `killSandbox security ApiKeyAuth`; "
        "security scheme removed `killSandbox security TeamAuth`" in text
    )


def _security_pair(old: list[dict[str, list[str]]], new: list[dict[str, list[str]]], **edits: str) -> ApiChangeReport:
    old_spec, new_spec = secured(make_spec(), *old), secured(make_spec(), *new)
    for scheme, edit in edits.items():
        if edit.startswith("description: "):
            new_spec["components"]["securitySchemes"][scheme]["description"] = edit.removeprefix("description: ")
        else:
            with_header_name(new_spec, scheme, edit)
    return compare_specs(old_spec, new_spec, credentials=SDK)


# One spec pair per rule that a variant of the SDK (its credential, its client's headers) picks.
VARIANT_PAIRS: dict[tuple[str, str], Any] = {
    ("response header added", "surfaced"): lambda: compare_specs(
        make_spec(), with_header(make_spec()), surfaced_headers=True
    ),
    ("response header added", "not surfaced"): lambda: compare_specs(make_spec(), with_header(make_spec())),
    ("response header removed", "surfaced"): lambda: compare_specs(
        with_header(make_spec()), make_spec(), surfaced_headers=True
    ),
    ("response header removed", "not surfaced"): lambda: compare_specs(with_header(make_spec()), make_spec()),
    ("security scheme removed", "the SDK's credential"): lambda: _security_pair([API_KEY, TOKEN], [TOKEN]),
    ("security scheme removed", "another credential"): lambda: _security_pair([API_KEY, TOKEN], [API_KEY]),
    ("security requirement added", "the SDK's credential"): lambda: _security_pair([API_KEY], [{**API_KEY, **TEAM}]),
    ("security requirement added", "another credential"): lambda: _security_pair(
        [API_KEY, TEAM], [API_KEY, {**TEAM, **TOKEN}]
    ),
    ("security scheme changed", "the SDK's credential"): lambda: _security_pair(
        [API_KEY], [API_KEY], ApiKeyAuth="X-Key"
    ),
    ("security scheme changed", "another credential"): lambda: _security_pair(
        [API_KEY, TEAM], [API_KEY, TEAM], TeamAuth="X-Org"
    ),
    ("security alternative added", "the SDK's credential"): lambda: _security_pair([TOKEN], [TOKEN, API_KEY]),
    ("security alternative added", "another credential"): lambda: _security_pair([API_KEY], [API_KEY, TOKEN]),
    ("security scheme description changed", "another credential"): lambda: _security_pair(
        [API_KEY], [API_KEY], TokenAuth="description: Bearer tokens, deprecated"
    ),
}


@pytest.mark.parametrize(("kind", "variant"), list(VARIANT_PAIRS), ids=[f"{k} ({v})" for k, v in VARIANT_PAIRS])
def test_each_variant_rule_has_its_spec_pair(kind: str, variant: str) -> None:
    (change,) = [c for c in VARIANT_PAIRS[(kind, variant)]().changes if c.kind == kind]
    side = "response" if kind.startswith("response") else "request"
    assert (change.kind, change.level, change.why) == (kind, *RULES[(kind, variant, side)])  # type: ignore[index]


def test_every_variant_rule_is_in_the_pairs_above() -> None:
    variants = {"surfaced", "not surfaced", "the SDK's credential", "another credential"}
    assert {(kind, variant) for kind, variant, _ in RULES if variant in variants} == set(VARIANT_PAIRS)


def test_every_rule_has_a_spec_pair_in_this_file() -> None:
    """Each row of RULES is produced by at least one comparison above (kinds are checked by name)."""
    source = Path(__file__).read_text()
    for kind, _variant, _side in RULES:
        assert f'"{kind}"' in source, f"no test names the change kind {kind!r}"


# --- the rules no test above reaches: one pair of specs each -----------------------


def set_in(path: tuple[Any, ...], value: Any) -> Any:
    """A spec edit: put `value` at `path` (keys from the top of the spec)."""

    def edit(spec: dict[str, Any]) -> None:
        node = spec
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return edit


def drop_at(path: tuple[Any, ...]) -> Any:
    def edit(spec: dict[str, Any]) -> None:
        node = spec
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]

    return edit


FORCE = ("components", "schemas", "SandboxPauseRequest", "properties", "memory")
SANDBOX_ID = ("components", "schemas", "Sandbox", "properties", "sandboxID")
PAIRS = [
    # (edit of the old spec, edit of the new spec, the change: level, kind, location)
    (None, set_in(("paths", PAUSE, "post", "tags"), ["admin"]), ("major", "operation moved", "pauseSandbox")),
    (
        set_in(("paths", PAUSE, "post", "deprecated"), True),
        None,
        ("patch", "operation no longer deprecated", "pauseSandbox"),
    ),
    (
        set_in((*FORCE, "nullable"), True),
        None,
        ("major", "made non-nullable", "pauseSandbox request body .memory"),
    ),
    (
        set_in((*SANDBOX_ID, "nullable"), True),
        None,
        ("patch", "made non-nullable", "getSandbox 200 response .sandboxID"),
    ),
    (None, set_in((*FORCE, "deprecated"), True), ("minor", "deprecated", "pauseSandbox request body .memory")),
    (None, set_in((*SANDBOX_ID, "deprecated"), True), ("minor", "deprecated", "getSandbox 200 response .sandboxID")),
    (
        None,
        set_in(("paths", SANDBOX, "delete", "responses", "204"), json_body(ref("SandboxPauseResult"), "Killed")),
        ("minor", "response body added", "killSandbox 204 response"),
    ),
    (
        None,
        drop_at(("paths", SANDBOX, "get", "responses", "200", "content")),
        ("major", "response body removed", "getSandbox 200 response"),
    ),
    (
        None,
        drop_at(("components", "responses", "409", "content")),
        ("minor", "response body removed", "pauseSandbox 409 response"),
    ),
]


@pytest.mark.parametrize(("edit_old", "edit_new", "expected"), PAIRS, ids=[p[2][1] + " " + p[2][0] for p in PAIRS])
def test_rule_pairs(edit_old: Any, edit_new: Any, expected: tuple[str, str, str]) -> None:
    old, new = make_spec(), make_spec()
    for edit, spec in ((edit_old, old), (edit_new, new)):
        if edit is not None:
            edit(spec)
    # A body that goes may take its model class along ("model removed", tested above).
    found = [(c.level, c.kind, c.location) for c in compare_specs(old, new).changes if c.kind != "model removed"]
    assert found == [expected]


# --- a security scheme's text ------------------------------------------------------


def described(spec: dict[str, Any], scheme: str, text: str) -> dict[str, Any]:
    spec["components"]["securitySchemes"][scheme]["description"] = text
    return spec


def test_a_reworded_scheme_the_sdk_never_sends_is_upstream_only() -> None:
    """The history's R21: a credential the SDK does not send gets a new description; no SDK release needed."""
    old = described(secured(make_spec(), API_KEY, TOKEN), "TokenAuth", "A bearer token.")
    new = described(secured(make_spec(), API_KEY, TOKEN), "TokenAuth", "**Deprecated.** Use the API key.")
    report = compare_specs(old, new, credentials=SDK)
    assert (report.level, report.description_changes, report.forcing) == ("none", 0, ())
    assert summary(report) == [("none", "security scheme description changed", "TokenAuth", "")]
    text = render_report(report, old_ref="a", new_ref="b")
    assert "Semver: **none** — no API changes" in text
    assert "## Upstream only (no SDK change)\n- security scheme description changed: `TokenAuth` [1]" in text
    assert f"1. {WHY_OTHER_CREDENTIAL}" in text
    # The SDK's own credential reworded, or any scheme when the credential is not known: documentation (patch).
    old = described(old, "ApiKeyAuth", "Your team's key.")
    new = described(new, "ApiKeyAuth", "Your team's API key, from the dashboard.")
    report = compare_specs(old, new, credentials=SDK)
    assert (report.level, report.description_changes) == ("patch", 1)
    assert summary(report) == [("none", "security scheme description changed", "TokenAuth", "")]
    report = compare_specs(old, new, credentials=None)
    assert (report.level, report.changes, report.description_changes) == ("patch", (), 2)


@needs_real_spec
def test_real_spec_a_reworded_scheme_the_sdk_never_sends_is_upstream_only() -> None:
    old = load_fixture()
    new = copy.deepcopy(old)
    new["components"]["securitySchemes"]["AccessTokenAuth"]["description"] = "Removed on 2027-01-01: use X-API-Key."
    report = compare_specs(old, new, credentials=SDK)
    assert report.level == "none"
    assert summary(report) == [("none", "security scheme description changed", "AccessTokenAuth", "")]


# --- validation keywords -----------------------------------------------------------


def bounded(spec: dict[str, Any], **bounds: Any) -> dict[str, Any]:
    """Give the pause request a `note` string and the sandbox a `name` string, both with these bounds."""
    schemas(spec)["SandboxPauseRequest"]["properties"]["note"] = {"type": "string", **bounds}
    schemas(spec)["Sandbox"]["properties"]["name"] = {"type": "string", **bounds}
    return spec


NOTE, NAME = "pauseSandbox request body .note", "getSandbox 200 response .name"

VALIDATION_CASES = [
    # (old bounds, new bounds, the request's (level, kind), the response's (level, kind, why))
    (
        {"maxLength": 64},
        {"maxLength": 32},
        ("major", "validation tightened"),
        ("patch", "validation tightened", WHY_VALIDATION_TIGHTENED_RESPONSE),
    ),
    (
        {"maxLength": 32},
        {"maxLength": 64},
        ("minor", "validation loosened"),
        ("major", "validation loosened", WHY_VALIDATION_LOOSENED_RESPONSE),
    ),
    (
        {"pattern": "^[a-z]+$"},
        {"pattern": "^[a-z0-9-]+$"},
        ("major", "validation changed"),
        ("major", "validation changed", WHY_VALIDATION_CHANGED_RESPONSE),
    ),
]


@pytest.mark.parametrize(("old_bounds", "new_bounds", "request_rule", "response_rule"), VALIDATION_CASES)
def test_validation_keywords_are_judged_by_the_side_they_bound(
    old_bounds: dict[str, Any],
    new_bounds: dict[str, Any],
    request_rule: tuple[str, str],
    response_rule: tuple[str, str, str],
) -> None:
    report = compare_specs(bounded(make_spec(), **old_bounds), bounded(make_spec(), **new_bounds))
    found = {c.location: (c.level, c.kind, c.why) for c in report.changes}
    why = WHY_VALIDATION_CHANGED_REQUEST if request_rule[1] == "validation changed" else None
    assert found == {NOTE: (*request_rule, why), NAME: response_rule}
    assert report.level == "major"
    # The same bounds on both sides are no change.
    assert compare_specs(bounded(make_spec(), **new_bounds), bounded(make_spec(), **new_bounds)).changes == ()


def test_a_tightened_parameter_bound_is_major_and_its_detail_names_the_keyword() -> None:
    def limit(maximum: int) -> dict[str, Any]:
        spec = make_spec()
        pause_op(spec)["parameters"].append(
            {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": maximum}}
        )
        return spec

    report = compare_specs(limit(100), limit(50))
    assert summary(report) == [
        ("major", "validation tightened", "pauseSandbox query parameter limit", "maximum <= 100 -> <= 50")
    ]
    text = render_report(report, old_ref="a", new_ref="b")
    assert "forced by: validation tightened `pauseSandbox query parameter limit`" in text
    assert "- validation tightened: `pauseSandbox query parameter limit` (`maximum <= 100 -> <= 50`)" in text


def test_bounds_on_array_items_and_nested_properties_are_compared() -> None:
    def tags(max_items: int, max_length: int) -> dict[str, Any]:
        spec = make_spec()
        item = {"type": "string", "maxLength": max_length}
        schemas(spec)["SandboxPauseRequest"]["properties"]["tags"] = {
            "type": "array",
            "maxItems": max_items,
            "items": item,
        }
        return spec

    assert summary(compare_specs(tags(10, 20), tags(5, 40))) == [
        ("major", "validation tightened", "pauseSandbox request body .tags", "maxItems 10 -> 5"),
        ("minor", "validation loosened", "pauseSandbox request body .tags[]", "maxLength 20 -> 40"),
    ]


def test_a_hostile_pattern_reaches_the_report_as_a_code_span() -> None:
    report = compare_specs(
        bounded(make_spec(), pattern="^a$"), bounded(make_spec(), pattern="`<img src=x>` [x](https:evil) @octocat")
    )
    text = render_report(report, old_ref="a", new_ref="b")
    assert "(``pattern ^a$ -> `<img src=x>` [x](https:evil) @octocat``)" in text
    assert "\n- validation changed: `pauseSandbox request body .note` (``pattern" in text


@needs_real_spec
def test_real_spec_a_lowered_page_limit_is_major_at_each_listing() -> None:
    old = load_fixture()
    new = copy.deepcopy(old)
    new["components"]["parameters"]["paginationLimit"]["schema"]["maximum"] = 50
    report = compare_specs(old, new)
    assert report.level == "major"
    found = {(c.kind, c.detail) for c in report.changes}
    assert found == {("validation tightened", "maximum <= 100 -> <= 50")}
    assert all(c.location.endswith("query parameter limit") for c in report.changes)
