"""Error codes in every form an upstream documents them, and the codes refused as constants."""

from __future__ import annotations

import pytest

from codegen.openapi.document import load_spec
from codegen.openapi.error_codes import codes_in_schema, constant_name, documented_error_codes, error_code_problems
from tests.fixtures import REAL_SPEC, needs_real_spec

FIELD = "/components/schemas/Error/properties/error_code"


def spec_with_field(field_yaml: str) -> bytes:
    indented = "\n".join("          " + line for line in field_yaml.splitlines())
    return (
        "openapi: 3.0.3\n"
        "info: {title: Codes, version: '1'}\n"
        "paths: {}\n"
        "components:\n"
        "  schemas:\n"
        "    Error:\n"
        "      type: object\n"
        "      properties:\n"
        "        error_code:\n"
        f"{indented}\n"
    ).encode()


def test_the_three_forms_make_one_union_in_order() -> None:
    schema = {
        "type": "string",
        "description": "Known values: rate_limited, sandbox_pause_refused, sandbox_capacity_unavailable.",
        "enum": ["sandbox_not_found", "rate_limited"],
        "x-error-codes": {"sandbox_pause_refused": "  The pause was refused.  "},
    }
    assert codes_in_schema(schema) == {
        "sandbox_pause_refused": "The pause was refused.",
        "sandbox_not_found": "",
        "rate_limited": "",
        "sandbox_capacity_unavailable": "",
    }


@pytest.mark.parametrize(
    ("description", "codes"),
    [
        ("Not a closed set; initial values: a_b, c_d.", ["a_b", "c_d"]),
        ("the codes are listed in `x-error-codes`", []),  # a hyphenated word, in backticks
        ("see docs/error_codes.md or error_codes.html", []),  # a file name is no code
        ("Machine-readable semantic error code", []),  # words without underscores
        ("Codes:\n- sandbox_gone\n- too_many_requests (back off)", ["sandbox_gone", "too_many_requests"]),
    ],
)
def test_prose_codes_are_snake_case_words_with_an_underscore(description: str, codes: list[str]) -> None:
    assert list(codes_in_schema({"description": description})) == codes


@needs_real_spec
def test_the_real_spec_lists_its_codes_in_prose() -> None:
    codes = documented_error_codes(load_spec(REAL_SPEC.read_bytes()).data)
    assert codes == dict.fromkeys(
        [
            "sandbox_capacity_unavailable",
            "sandbox_placement_timeout",
            "sandbox_no_compatible_node",
            "sandbox_create_failed",
            "internal_server_error",
        ],
        "",
    )


def test_a_referenced_field_is_followed() -> None:
    spec = {
        "components": {
            "schemas": {
                "Error": {"properties": {"error_code": {"$ref": "#/components/schemas/Code"}}},
                "Code": {"type": "string", "enum": ["a_b"]},
            }
        }
    }
    assert documented_error_codes(spec) == {"a_b": ""}


def test_no_error_schema_documents_nothing() -> None:
    assert documented_error_codes({"paths": {}}) == {}


@pytest.mark.parametrize(
    ("field", "pointer", "code"),
    [
        ("type: string\nenum: [ok_code, Not-Snake]", f"{FIELD}/enum/1", "Not-Snake"),
        ("type: string\nx-error-codes:\n  ok_code: fine\n  BadCode: no", f"{FIELD}/x-error-codes/BadCode", "BadCode"),
        ("type: string\nenum: [ok_code, 9lives]", f"{FIELD}/enum/1", "9lives"),
    ],
)
def test_a_structured_code_that_is_not_snake_case_is_refused_with_its_pointer(
    field: str, pointer: str, code: str
) -> None:
    doc = load_spec(spec_with_field(field))
    [problem] = error_code_problems(doc)
    assert problem.message == f"error code {code!r} is not snake_case ([a-z][a-z0-9_]*)"
    assert problem.where == f"spec/openapi.yml:{doc.line_of(pointer)} ({pointer})"
    assert doc.line_of(pointer) != doc.line_of(FIELD)
    assert problem.remedy is not None and "upstream" in problem.remedy


def test_two_codes_making_one_constant_are_refused_naming_both() -> None:
    doc = load_spec(spec_with_field("type: string\nx-error-codes:\n  sandbox_gone: a\n  sandbox__gone: b"))
    [problem] = error_code_problems(doc)
    assert problem.message == (
        "error codes 'sandbox_gone' and 'sandbox__gone' would both be the constant SANDBOX_GONE_ERROR_CODE"
    )
    assert problem.where == f"spec/openapi.yml:{doc.line_of(FIELD)} ({FIELD})"


def test_good_codes_raise_nothing() -> None:
    doc = load_spec(spec_with_field("type: string\nenum: [a_b]\ndescription: also c_d and a_b"))
    assert error_code_problems(doc) == []


def test_constant_name() -> None:
    assert constant_name("sandbox_pause_refused") == "SANDBOX_PAUSE_REFUSED_ERROR_CODE"


def test_a_dashed_twin_of_a_code_is_refused_twice_naming_both() -> None:
    # The upstream adds sandbox-pause-refused beside sandbox_pause_refused: both would be
    # SANDBOX_PAUSE_REFUSED_ERROR_CODE and the real code could drop out of DOCUMENTED_ERROR_CODES.
    doc = load_spec(
        spec_with_field("type: string\nx-error-codes:\n  sandbox_pause_refused: a\n  sandbox-pause-refused: b")
    )
    not_snake, clash = error_code_problems(doc)
    assert not_snake.message == "error code 'sandbox-pause-refused' is not snake_case ([a-z][a-z0-9_]*)"
    assert not_snake.where is not None and not_snake.where.endswith(f"({FIELD}/x-error-codes/sandbox-pause-refused)")
    assert "'sandbox_pause_refused' and 'sandbox-pause-refused'" in clash.message
    assert "SANDBOX_PAUSE_REFUSED_ERROR_CODE" in clash.message
