"""The contract gate: each missing pause element is named, with its line and why."""

from __future__ import annotations

from collections.abc import Callable
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from codegen.contract import REMEDY, check_contract, credential_schemes, load_contract
from codegen.openapi.document import SpecDocument, load_spec
from tests.codegen.conftest import Result, unchanged
from tests.fixtures import REAL_SPEC, needs_real_spec
from toolkit.errors import Problem, ToolError

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "spec" / "contract.yml"

PAUSE = "/paths/~1sandboxes~1{sandboxID}~1pause/post"
PAUSE_POINTERS = [
    "/components/schemas/SandboxPauseRequest/properties/force",
    "/components/schemas/SandboxPauseResult/properties/forced",
    f"{PAUSE}/responses/200",
    f"{PAUSE}/responses/400",
    f"{PAUSE}/responses/503",
    "/components/schemas/Error/properties/error_code",
]
# The SDK's credential (compared by bump's report; here: the gate).
CREDENTIAL = "/components/securitySchemes/ApiKeyAuth"
# The one entry at level warning: the transport recognises a refusal by its body.
WARNING_POINTERS = [f"{PAUSE}/responses/503"]
ERROR_POINTERS = [p for p in PAUSE_POINTERS if p not in WARNING_POINTERS]

# A spec that honours the whole pause contract; each test breaks one thing.
GOOD_SPEC = """\
openapi: 3.0.3
info: {title: Pause, version: "1"}
paths:
  /sandboxes/{sandboxID}/pause:
    post:
      tags: [sandboxes]
      parameters:
        - {name: sandboxID, in: path, required: true, schema: {type: string}}
      requestBody:
        content:
          application/json:
            schema:
              $ref: "#/components/schemas/SandboxPauseRequest"
      responses:
        "200":
          description: paused
          content:
            application/json:
              schema:
                $ref: "#/components/schemas/SandboxPauseResult"
        "400":
          $ref: "#/components/responses/400"
        "503":
          $ref: "#/components/responses/503"
components:
  securitySchemes:
    ApiKeyAuth: {type: apiKey, in: header, name: X-API-Key}
  responses:
    "400":
      description: bad request
      content:
        application/json:
          schema: {$ref: "#/components/schemas/Error"}
    "503":
      description: refused or busy
      content:
        application/json:
          schema: {$ref: "#/components/schemas/Error"}
  schemas:
    SandboxPauseRequest:
      type: object
      properties:
        memory: {type: boolean, default: true}
        force:
          type: boolean
          default: false
    SandboxPauseResult:
      type: object
      required: [forced]
      properties:
        forced: {type: boolean}
    Error:
      type: object
      required: [code, message]
      properties:
        code: {type: integer}
        message: {type: string}
        error_code:
          type: string
          x-error-codes:
            sandbox_pause_refused: the sandbox cannot be paused now
"""


def spec_with(edit: Callable[[Any], None]) -> SpecDocument:
    yaml = YAML(typ="rt")
    data = yaml.load(GOOD_SPEC)
    edit(data)
    out = StringIO()
    yaml.dump(data, out)
    return load_spec(out.getvalue().encode())


def schemas(data: Any) -> Any:
    return data["components"]["schemas"]


def pause_responses(data: Any) -> Any:
    return data["paths"]["/sandboxes/{sandboxID}/pause"]["post"]["responses"]


def the_one_miss(doc: SpecDocument, contract: Path = CONTRACT) -> tuple[str, Problem]:
    """(level, problem) of the only miss, whichever its level."""
    result = check_contract(doc, contract)
    misses = [("error", p) for p in result.errors] + [("warning", p) for p in result.warnings]
    assert len(misses) == 1, misses
    return misses[0]


def test_the_good_spec_honours_the_contract() -> None:
    result = check_contract(load_spec(GOOD_SPEC.encode()), CONTRACT)
    assert result.errors == [] and result.warnings == []


def test_the_contract_covers_the_credential_and_the_pause_elements() -> None:
    entries = load_contract(CONTRACT)
    assert [entry.pointer for entry in entries] == [CREDENTIAL, *PAUSE_POINTERS]
    assert credential_schemes(entries) == frozenset({"ApiKeyAuth"})
    assert credential_schemes([e for e in entries if e.pointer != CREDENTIAL]) is None


# --- the credential -------------------------------------------------------------------


def security_schemes(data: Any) -> Any:
    return data["components"]["securitySchemes"]


def test_a_credential_the_spec_lacks_is_a_miss_with_its_pointer_and_remedy() -> None:
    def renamed(data: Any) -> None:
        security_schemes(data)["KeyAuth"] = security_schemes(data).pop("ApiKeyAuth")

    doc = spec_with(renamed)
    level, miss = the_one_miss(doc)
    assert level == "error"
    assert miss.message.startswith(f"contract miss: {CREDENTIAL} is missing; needed because the SDK sends its API key")
    assert miss.where == f"spec/openapi.yml:{doc.line_of(CREDENTIAL)} ({CREDENTIAL})"
    assert text_at(doc, doc.line_of(CREDENTIAL)) == "securitySchemes:"  # the nearest line there is
    assert miss.remedy == REMEDY


@pytest.mark.parametrize("name", ["X-API-Key", "x-api-key", "X-Api-Key"])
def test_a_credential_header_matches_in_any_case(name: str) -> None:
    result = check_contract(spec_with(lambda data: security_schemes(data)["ApiKeyAuth"].update(name=name)), CONTRACT)
    assert result.errors == []


@pytest.mark.parametrize(
    ("change", "complaint"),
    [
        ({"name": "Authorization"}, "asks for type=apiKey in=header name=Authorization, where the SDK sends"),
        ({"in": "query"}, "asks for type=apiKey in=query name=X-API-Key, where the SDK sends"),
        (
            {"type": "http", "scheme": "bearer"},
            "asks for type=http scheme=bearer, where the SDK sends type=apiKey in=header name=X-API-Key",
        ),
    ],
)
def test_a_credential_asked_for_otherwise_is_a_miss(change: dict[str, str], complaint: str) -> None:
    def edit(data: Any) -> None:
        scheme = security_schemes(data)["ApiKeyAuth"]
        if change.get("type") == "http":
            scheme.clear()
        scheme.update(change)

    level, miss = the_one_miss(spec_with(edit))
    assert level == "error"
    assert f"{CREDENTIAL} {complaint}" in miss.message


def drop_force(data: Any) -> None:
    del schemas(data)["SandboxPauseRequest"]["properties"]["force"]


def drop_forced(data: Any) -> None:
    result = schemas(data)["SandboxPauseResult"]
    del result["properties"]["forced"]
    del result["required"]


def drop_200(data: Any) -> None:
    del pause_responses(data)["200"]
    pause_responses(data)["204"] = {"description": "paused"}


def drop_400(data: Any) -> None:
    del pause_responses(data)["400"]


def drop_503(data: Any) -> None:
    del pause_responses(data)["503"]


def drop_code(data: Any) -> None:
    codes = schemas(data)["Error"]["properties"]["error_code"]["x-error-codes"]
    del codes["sandbox_pause_refused"]
    codes["sandbox_capacity_unavailable"] = "no room"


def text_at(doc: SpecDocument, line: int | None) -> str:
    assert line is not None
    return doc.raw.decode().splitlines()[line - 1].strip()


@pytest.mark.parametrize(
    ("edit", "pointer", "nearest"),
    [
        (drop_force, PAUSE_POINTERS[0], "properties:"),  # SandboxPauseRequest's
        (drop_forced, PAUSE_POINTERS[1], "properties:"),  # SandboxPauseResult's
        (drop_200, PAUSE_POINTERS[2], "responses:"),
        (drop_400, PAUSE_POINTERS[3], "responses:"),
    ],
)
def test_each_missing_element_is_the_one_miss(edit: Callable[[Any], None], pointer: str, nearest: str) -> None:
    doc = spec_with(edit)

    level, miss = the_one_miss(doc)

    line = doc.line_of(pointer)
    assert level == "error"
    assert miss.where == f"spec/openapi.yml:{line} ({pointer})"
    assert text_at(doc, line).startswith(nearest)
    assert miss.message.startswith(f"contract miss: {pointer} is missing; needed because ")
    assert miss.remedy == REMEDY


def test_a_missing_503_is_only_a_warning() -> None:
    doc = spec_with(drop_503)

    level, miss = the_one_miss(doc)

    assert level == "warning"
    assert miss.where == f"spec/openapi.yml:{doc.line_of(PAUSE_POINTERS[4])} ({PAUSE_POINTERS[4]})"
    assert miss.message.startswith(f"contract warning: {PAUSE_POINTERS[4]} is missing; wanted because ")
    assert miss.remedy is not None and miss.remedy.startswith("generation proceeds")


def test_an_undocumented_error_code_is_a_miss_at_the_field() -> None:
    doc = spec_with(drop_code)

    level, miss = the_one_miss(doc)

    assert level == "error"
    assert text_at(doc, doc.line_of(PAUSE_POINTERS[5])) == "error_code:"
    assert miss.message.startswith(
        f"contract miss: {PAUSE_POINTERS[5]} does not document the error code 'sandbox_pause_refused'"
    )


def code_as_enum(data: Any) -> None:
    field = schemas(data)["Error"]["properties"]["error_code"]
    del field["x-error-codes"]
    field["enum"] = ["sandbox_capacity_unavailable", "sandbox_pause_refused"]


def code_in_prose(data: Any) -> None:
    field = schemas(data)["Error"]["properties"]["error_code"]
    del field["x-error-codes"]
    field["description"] = (
        "Machine-readable semantic error code. Not a closed set; initial values: "
        "sandbox_capacity_unavailable, sandbox_pause_refused, internal_server_error."
    )


def code_in_prose_as_a_longer_word(data: Any) -> None:
    field = schemas(data)["Error"]["properties"]["error_code"]
    del field["x-error-codes"]
    field["description"] = "See x-sandbox_pause_refused-codes and sandbox_pause_refused_v2."


@pytest.mark.parametrize("edit", [code_as_enum, code_in_prose])
def test_documents_accepts_every_form_of_error_code(edit: Callable[[Any], None]) -> None:
    result = check_contract(spec_with(edit), CONTRACT)
    assert result.errors == [] and result.warnings == []


def test_documents_does_not_match_inside_a_longer_word() -> None:
    level, miss = the_one_miss(spec_with(code_in_prose_as_a_longer_word))
    assert level == "error"
    assert "does not document the error code 'sandbox_pause_refused'" in miss.message


def test_wrong_type_is_a_miss(tmp_path: Path) -> None:
    contract = tmp_path / "contract.yml"
    contract.write_text(f"- pointer: {PAUSE_POINTERS[0]}\n  type: string\n  why: test\n")

    doc = load_spec(GOOD_SPEC.encode())
    [miss] = check_contract(doc, contract).errors

    assert "force has type 'boolean' (needs 'string'); needed because test" in miss.message
    assert miss.where == f"spec/openapi.yml:{doc.line_of(PAUSE_POINTERS[0])} ({PAUSE_POINTERS[0]})"
    assert text_at(doc, doc.line_of(PAUSE_POINTERS[0])) == "force:"


def test_default_must_be_false_not_missing_or_true() -> None:
    def no_default(data: Any) -> None:
        del schemas(data)["SandboxPauseRequest"]["properties"]["force"]["default"]

    def default_true(data: Any) -> None:
        schemas(data)["SandboxPauseRequest"]["properties"]["force"]["default"] = True

    [missing] = check_contract(spec_with(no_default), CONTRACT).errors
    [wrong] = check_contract(spec_with(default_true), CONTRACT).errors
    assert "has no default (needs default: false)" in missing.message
    assert "has default true (needs false)" in wrong.message


def test_forced_must_be_required() -> None:
    def optional(data: Any) -> None:
        del schemas(data)["SandboxPauseResult"]["required"]

    doc = spec_with(optional)
    [miss] = check_contract(doc, CONTRACT).errors
    assert str(miss.where).endswith(f"({PAUSE_POINTERS[1]})")
    assert text_at(doc, doc.line_of(PAUSE_POINTERS[1])) == "forced: {type: boolean}"
    assert "not listed in its schema's required list" in miss.message


def test_200_must_refer_to_the_pause_result() -> None:
    def inline(data: Any) -> None:
        pause_responses(data)["200"]["content"]["application/json"]["schema"] = {"$ref": "#/components/schemas/Error"}

    [miss] = check_contract(spec_with(inline), CONTRACT).errors
    assert "does not refer to #/components/schemas/SandboxPauseResult" in miss.message


def test_503_through_a_shared_response_must_carry_error() -> None:
    def other_body(data: Any) -> None:
        data["components"]["responses"]["503"]["content"]["application/json"]["schema"] = {"type": "string"}

    [miss] = check_contract(spec_with(other_body), CONTRACT).warnings
    assert str(miss.where).endswith(f"({PAUSE_POINTERS[4]})")
    assert "does not refer to #/components/schemas/Error" in miss.message


def test_every_miss_is_reported_not_just_the_first() -> None:
    def drop_all(data: Any) -> None:
        for edit in (drop_force, drop_forced, drop_200, drop_400, drop_503, drop_code):
            edit(data)

    result = check_contract(spec_with(drop_all), CONTRACT)
    assert [str(miss.where).split(" ", 1)[1] for miss in result.errors] == [f"({p})" for p in ERROR_POINTERS]
    assert [str(miss.where).split(" ", 1)[1] for miss in result.warnings] == [f"({p})" for p in WARNING_POINTERS]


@needs_real_spec
def test_the_real_spec_is_rejected_naming_each_missing_pause_element() -> None:
    doc = load_spec(REAL_SPEC.read_bytes())

    result = check_contract(doc, CONTRACT)

    misses = result.errors + result.warnings
    assert [str(miss.where).split(" ", 1)[1] for miss in misses] == [
        f"({p})" for p in ERROR_POINTERS + WARNING_POINTERS
    ]
    for miss, pointer in zip(misses, ERROR_POINTERS + WARNING_POINTERS, strict=True):
        line = doc.line_of(pointer)
        assert line is not None
        assert miss.where == f"spec/openapi.yml:{line} ({pointer})"
        wanted = (
            "does not document the error code 'sandbox_pause_refused'" if pointer == PAUSE_POINTERS[5] else "is missing"
        )
        assert f"{pointer} {wanted}" in miss.message
    # The request schema exists (with `memory`), so force is placed right there.
    assert doc.line_of(PAUSE_POINTERS[0]) == doc.line_of("/components/schemas/SandboxPauseRequest/properties")


# --- a malformed contract is refused, naming the file and entry -----------------------


def write_contract(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "contract.yml"
    path.write_text(text)
    return path


def contract_problems(path: Path) -> list[str]:
    with pytest.raises(ToolError) as caught:
        load_contract(path)
    return [problem.render() for problem in caught.value.problems]


def test_bad_yaml_in_the_contract(tmp_path: Path) -> None:
    path = write_contract(tmp_path, "- pointer: /a\n  why: [x\n")
    [message] = contract_problems(path)
    assert message.startswith(f"{path}:")
    assert "is not valid YAML" in message


def test_unknown_check_and_bad_pointer_are_all_named(tmp_path: Path) -> None:
    path = write_contract(
        tmp_path,
        "- pointer: /a\n  why: w\n  exists: true\n"
        "- pointer: /b\n  why: w\n  exists: true\n  optional: true\n"
        "- pointer: c~2\n  why: w\n  exists: true\n",
    )
    messages = contract_problems(path)
    assert len(messages) == 2
    assert messages[0].startswith(f"{path}:4 (entry 2): unknown key(s) optional")
    assert messages[1].startswith(f"{path}:8 (entry 3): JSON pointer 'c~2'")


@pytest.mark.parametrize(
    ("entry", "complaint"),
    [
        ("- pointer: /a\n  exists: true\n", "needs a `why`"),
        ("- why: w\n  exists: true\n", "needs a `pointer`"),
        ("- pointer: /a\n  why: w\n", "has no check"),
        ("- pointer: /a\n  why: w\n  exists: false\n", "exists must be true"),
        ("- pointer: /a/b\n  why: w\n  required: true\n", "ending in /properties/NAME"),
        ("- pointer: /a\n  why: w\n  type: bool\n", "type must be one of"),
        ("- pointer: /a\n  why: w\n  ref: other.yml#/A\n", "ref must be a local"),
        (
            "- pointer: /a\n  why: w\n  exists: true\n  level: fatal\n",
            "unknown level 'fatal'; use one of error, warning",
        ),
        ("- pointer: /a\n  why: w\n  documents: Sandbox-Pause\n", "documents must be a snake_case error code"),
        (
            "- pointer: /components/schemas/A\n  why: w\n  credential: {type: apiKey, in: header, name: X}\n",
            "credential needs a pointer to a security scheme",
        ),
        ("- pointer: /components/securitySchemes/A\n  why: w\n  credential: X-API-Key\n", "must be a mapping"),
        (
            "- pointer: /components/securitySchemes/A\n  why: w\n  credential: {type: apiKey, in: header}\n",
            "an apiKey credential needs `in` (header, query or cookie) and `name`",
        ),
        (
            "- pointer: /components/securitySchemes/A\n  why: w\n  credential: {type: key, name: X}\n",
            "credential type must be one of",
        ),
        ("- just a string\n", "an entry must be a mapping"),
        ("pointer: /a\n", "must be a list of entries"),
    ],
)
def test_malformed_entries_are_refused(tmp_path: Path, entry: str, complaint: str) -> None:
    path = write_contract(tmp_path, entry)
    [message] = contract_problems(path)
    assert message.startswith(str(path))
    assert complaint in message


def test_missing_contract_file(tmp_path: Path) -> None:
    [message] = contract_problems(tmp_path / "nope.yml")
    assert "cannot read the contract" in message


# --- what the contract says reaches the terminal escaped (issue 20, item 9) ------------

HOSTILE_WHY = r"the SDK \e[2J\e]0;owned\a relies on it \u202egnp.exe"
SHOWN_WHY = r"the SDK \x1b[2J\x1b]0;owned\x07 relies on it \u202egnp.exe"


@pytest.mark.parametrize(("level", "code"), [("error", 2), ("warning", 0)])
def test_a_hostile_why_is_printed_escaped(project: Path, run: Callable[..., Result], level: str, code: int) -> None:
    """A real run: the contract's `why` (escape sequences, a bidi override) comes out as Python escapes."""
    contract = project / "spec/contract.yml"
    contract.write_text(
        contract.read_text()
        + f'\n- pointer: /components/schemas/Nope\n  why: "{HOSTILE_WHY}"\n  level: {level}\n  exists: true\n'
    )
    with unchanged(project):
        result = run(project, "generate")
    assert result.code == code, result.text
    assert f"because {SHOWN_WHY}" in result.err
    assert not {"\x1b", "\x07", "\u202e"} & set(result.text)
