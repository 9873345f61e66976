"""load_spec: every refusal happens, with a line, before anything dangerous runs."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import codegen.openapi.document as spec_document
from codegen.openapi.document import load_spec, validate_openapi
from codegen.openapi.json_pointer import PointerSyntaxError, format_pointer, parse_pointer, resolve_pointer
from codegen.openapi.plain_yaml import MAX_YAML_BYTES
from codegen.openapi.ref_chains import MAX_HOPS
from tests.codegen.conftest import Result, Upstream, unchanged
from tests.codegen.hostile_specs import big_enum, big_integer, many_schemas, object_graph, ref_chain
from tests.fixtures import REAL_SPEC, needs_real_spec
from toolkit.errors import ToolError

ROOT = Path(__file__).resolve().parents[3]

VALID = b"""\
openapi: 3.0.3
info:
  title: Tiny
  version: "1"
paths:
  /things/{id}:
    get:
      parameters:
        - name: id
          in: path
          required: true
          schema:
            type: string
      responses:
        200:
          description: ok
          content:
            application/json:
              schema:
                $ref: "#/components/schemas/Thing"
components:
  schemas:
    Thing:
      type: object
      properties:
        a~b:
          type: string
        created:
          type: string
          example: 2024-01-02
"""


def problems_of(data: bytes) -> list[str]:
    with pytest.raises(ToolError) as caught:
        load_spec(data)
    return [problem.render() for problem in caught.value.problems]


@pytest.fixture
def validator_must_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Proves a refusal came before the validator (and so before any resolver)."""

    def explode(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the validator ran")

    monkeypatch.setattr(spec_document, "validate_openapi", explode)


# --- good input ---------------------------------------------------------------


def test_valid_spec_loads_as_plain_data() -> None:
    doc = load_spec(VALID)

    assert doc.raw == VALID
    assert doc.display_path == "spec/openapi.yml"
    responses = doc.data["paths"]["/things/{id}"]["get"]["responses"]
    # A bare 200 is text, as in JSON.
    assert list(responses) == ["200"]
    assert type(doc.data["info"]["title"]) is str
    assert doc.data["components"]["schemas"]["Thing"]["properties"]["created"]["example"] == ("2024-01-02")


def test_line_of_points_at_the_node_or_its_nearest_ancestor() -> None:
    doc = load_spec(VALID)

    assert doc.line_of("/paths/~1things~1{id}/get/responses/200") == 15
    assert doc.line_of("/paths/~1things~1{id}/get/parameters/0/in") == 10
    assert doc.line_of("/components/schemas/Thing/properties/a~0b") == 26
    # Missing: the nearest existing ancestor, Thing's `properties`.
    assert doc.line_of("/components/schemas/Thing/properties/nope/type") == 25
    assert doc.line_of("") == 1
    assert doc.where("/components/schemas/Thing/properties/nope") == (
        "spec/openapi.yml:25 (/components/schemas/Thing/properties/nope)"
    )


def test_display_path_is_used_in_problems() -> None:
    with pytest.raises(ToolError) as caught:
        load_spec(b"a: [1,\n", display_path="upstream/spec.yml")
    assert caught.value.problems[0].where == "upstream/spec.yml:2"


# --- refusals after parsing -------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "found"),
    [
        (b"- openapi: 3.0.3\n", "top level is not a mapping"),
        (b"just text\n", "top level is not a mapping"),
        (b"swagger: '2.0'\ninfo: {}\n", "openapi: None"),
        (b"openapi: 2.0.0\n", "openapi: '2.0.0'"),
        (b"openapi: 3.0\n", "openapi: 3.0"),  # a YAML float, not a version
    ],
)
def test_not_openapi3_is_refused(source: bytes, found: str) -> None:
    [message] = problems_of(source)
    assert f"not an OpenAPI 3 document ({found})" in message


def spec_with_ref(ref: str) -> bytes:
    return VALID.replace(b'"#/components/schemas/Thing"', f'"{ref}"'.encode())


@pytest.mark.parametrize(
    "ref",
    [
        "file:///etc/passwd",
        "http://169.254.169.254/latest/meta-data/",
        "https://example.com/spec.yml#/components/schemas/Thing",
        "other.yml#/x",
        "../secrets.yml",
    ],
)
def test_non_local_refs_are_refused_before_validation(ref: str, validator_must_not_run: None) -> None:
    [message] = problems_of(spec_with_ref(ref))
    assert message.startswith(
        "spec/openapi.yml:20 (/paths/~1things~1{id}/get/responses/200/content/application~1json/schema/$ref): "
    )
    assert f"$ref {ref!r} is not local" in message


def test_every_non_local_ref_is_reported(validator_must_not_run: None) -> None:
    source = VALID + b"    A: {$ref: 'file:///etc/passwd'}\n    B: {$ref: 'http://10.0.0.1/'}\n"
    messages = problems_of(source)
    assert len(messages) == 2
    assert "spec/openapi.yml:31 (/components/schemas/A/$ref)" in messages[0]
    assert "spec/openapi.yml:32 (/components/schemas/B/$ref)" in messages[1]


def test_dangling_local_ref_is_reported_with_its_line(validator_must_not_run: None) -> None:
    [message] = problems_of(spec_with_ref("#/components/schemas/Gone"))
    assert message.startswith("spec/openapi.yml:20 ")
    assert "'#/components/schemas/Gone' points at nothing" in message


def test_id_that_would_move_the_base_uri_is_refused(validator_must_not_run: None) -> None:
    source = VALID + b"    A: {$id: 'http://internal/', type: string}\n"
    [message] = problems_of(source)
    assert "spec/openapi.yml:31 (/components/schemas/A/$id)" in message


def test_validation_errors_are_all_reported_with_their_pointer_and_line() -> None:
    source = VALID.replace(b'  version: "1"\n', b"").replace(b"          in: path\n", b"")
    messages = problems_of(source)
    assert len(messages) == 2
    assert messages[0] == 'spec/openapi.yml:2 (/info): "version" is a required property'
    assert messages[1].startswith("spec/openapi.yml:8 (/paths/~1things~1{id}/get/parameters/0):")


def test_validation_errors_are_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spec_document, "MAX_PROBLEMS", 3)
    operations = "".join(f"  /p{index}:\n    get:\n      responses:\n        '200': {{}}\n" for index in range(6))
    source = f"openapi: 3.0.3\ninfo: {{title: x, version: '1'}}\npaths:\n{operations}".encode()
    messages = problems_of(source)
    assert len(messages) == 4
    assert messages[-1] == "stopped after 3 validation errors"


def test_validator_itself_never_fetches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Belt and braces: even handed an external ref directly, nothing is opened."""
    import jsonschema_path.handlers.urllib as urllib_handler
    import jsonschema_path.retrievers as retrievers

    opened: list[object] = []
    monkeypatch.setattr(retrievers, "urlopen", lambda *args, **kwargs: opened.append(args))
    monkeypatch.setattr(urllib_handler, "urlopen", lambda *args, **kwargs: opened.append(args))
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "x", "version": "1"},
        "paths": {"/a": {"get": {"responses": {"200": {"$ref": "file:///etc/passwd"}}}}},
    }

    problems = validate_openapi(spec)

    assert opened == []
    assert len(problems) == 1
    assert "refused to fetch 'file:///etc/passwd'" in problems[0].message


# --- JSON pointers ----------------------------------------------------------------


def test_pointer_escapes_round_trip() -> None:
    segments = ("paths", "/sandboxes/{id}", "a~b", "~1")
    pointer = format_pointer(segments)
    assert pointer == "/paths/~1sandboxes~1{id}/a~0b/~01"
    assert parse_pointer(pointer) == segments


@pytest.mark.parametrize("bad", ["paths", "/a~2", "/a~"])
def test_bad_pointer_syntax_is_refused(bad: str) -> None:
    with pytest.raises(PointerSyntaxError):
        parse_pointer(bad)


def test_resolve_pointer_reports_missing_without_raising() -> None:
    data = {"a": [{"b": None}], "01": 1}
    assert resolve_pointer(data, "/a/0/b") == (True, None)
    assert resolve_pointer(data, "/a/1") == (False, None)
    assert resolve_pointer(data, "/a/01") == (False, None)
    assert resolve_pointer(data, "/01") == (True, 1)
    assert resolve_pointer(data, "") == (True, data)


# --- the real spec ----------------------------------------------------------------


@needs_real_spec
def test_real_spec_loads() -> None:
    doc = load_spec(REAL_SPEC.read_bytes())
    assert doc.data["openapi"].startswith("3.")
    assert doc.line_of("/paths/~1sandboxes~1{sandboxID}~1pause/post") is not None


@pytest.mark.parametrize(
    ("schemas", "cycle"),
    [
        (
            '    Loop:\n      $ref: "#/components/schemas/Loop"\n',
            "#/components/schemas/Loop -> #/components/schemas/Loop",
        ),
        (
            '    A:\n      $ref: "#/components/schemas/B"\n    B:\n      $ref: "#/components/schemas/A"\n',
            "#/components/schemas/B -> #/components/schemas/A -> #/components/schemas/B",
        ),
    ],
)
def test_a_ref_cycle_is_a_clean_error_naming_the_pointer(schemas: str, cycle: str) -> None:
    text = (ROOT / "spec" / "openapi.yml").read_text().replace("  schemas:\n", "  schemas:\n" + schemas, 1)
    with pytest.raises(ToolError) as caught:
        load_spec(text.encode())
    rendered = str(caught.value)
    assert "is a cycle of references that never reaches a schema" in rendered and cycle in rendered
    assert "/components/schemas/" in caught.value.problems[0].where  # type: ignore[operator]
    assert "RecursionError" not in rendered


def test_a_schema_that_refers_to_itself_through_a_property_is_fine() -> None:
    text = (ROOT / "spec" / "openapi.yml").read_text()
    node = (
        "    Node:\n      type: object\n      properties:\n"
        '        child:\n          $ref: "#/components/schemas/Node"\n'
    )
    load_spec(text.replace("  schemas:\n", "  schemas:\n" + node, 1).encode())


def test_a_bad_default_value_is_named_at_its_own_line() -> None:
    """The validator reports default-value errors at the root; the problem names the default's node."""
    spec = (ROOT / "spec/openapi.yml").read_text()
    field = "        autoPause:\n          type: boolean\n"
    good = field + "          default: false\n"
    assert spec.count(good) == 1
    line = spec[: spec.index(good) + len(field)].count("\n") + 1
    bad = spec.replace(good, field + '          default: "nope"\n', 1)
    with pytest.raises(ToolError) as caught:
        load_spec(bad.encode(), display_path="runtime@abc1234:spec/openapi.yml")
    (problem,) = caught.value.problems
    assert problem.message == "'nope' is not of type 'boolean'"
    assert (
        problem.where
        == f"runtime@abc1234:spec/openapi.yml:{line} (/components/schemas/NewSandbox/properties/autoPause/default)"
    )


# --- hostile specs fail fast, in one line, for every verb (issue 31, points 7 and 10) -------------------

SPEC_TEXT = (ROOT / "spec" / "openapi.yml").read_text()


def test_a_long_chain_of_references_is_one_problem_at_its_first_reference() -> None:
    text = ref_chain(SPEC_TEXT)
    with pytest.raises(ToolError) as caught:
        load_spec(text.encode())
    [problem] = caught.value.problems
    first = text.index("      $ref: '#/components/schemas/Chain") + 1
    assert problem.where is not None and problem.where.startswith(
        f"spec/openapi.yml:{text[:first].count(chr(10)) + 1} ("
    )
    assert "starts a chain of 3,000 references to references before" in problem.message
    assert f"more than the {MAX_HOPS} a spec may chain" in problem.message


def test_a_chain_at_the_bound_is_fine() -> None:
    load_spec(ref_chain(SPEC_TEXT, length=MAX_HOPS - 1).encode())


def test_a_long_cycle_is_one_problem_shown_by_its_ends() -> None:
    block = "".join(f'    Loop{i}:\n      $ref: "#/components/schemas/Loop{(i + 1) % 3000}"\n' for i in range(3000))
    with pytest.raises(ToolError) as caught:
        load_spec(SPEC_TEXT.replace("  schemas:\n", "  schemas:\n" + block, 1).encode())
    [problem] = caught.value.problems
    assert "is a cycle of references that never reaches a schema" in problem.message
    assert problem.message.endswith("(3,000 references))")


def test_a_graph_of_shared_objects_is_refused_at_its_operation() -> None:
    with pytest.raises(ToolError) as caught:
        load_spec(object_graph(SPEC_TEXT).encode())
    [problem] = caught.value.problems
    assert problem.where is not None and problem.where.endswith(" (/paths/~1sandboxes/post)")
    assert problem.message.startswith("the schemas below POST /sandboxes unfold into more than 20,000 places")


HOSTILE: dict[str, Callable[[], str]] = {
    "ref-chain": lambda: ref_chain(SPEC_TEXT),
    "object-graph": lambda: object_graph(SPEC_TEXT, width=18),
    "many-schemas": lambda: many_schemas(SPEC_TEXT),
    "big-integer": lambda: big_integer(SPEC_TEXT)[0],
    "big-enum": lambda: big_enum(SPEC_TEXT)[0],
}
SAID = {
    "ref-chain": "starts a chain of 3,000 references to references",
    "object-graph": "the schemas below POST /sandboxes unfold into more than 20,000 places",
    "many-schemas": "holds more than 10,000 objects (mappings)",
    "big-integer": f":{big_integer(SPEC_TEXT)[1]}: holds an integer of 5,000 digits",
    "big-enum": f":{big_enum(SPEC_TEXT)[1]}: holds a list (/components/schemas/Flavour/enum) of more than 2,000 items",
}
VERBS: dict[str, Callable[[str], tuple[tuple[str, ...], dict[str, str]]]] = {
    "generate": lambda commit: (("generate",), {"E2B_RUNTIME_REF": commit}),
    "check": lambda commit: (("check", "--no-cache"), {"E2B_RUNTIME_REF": commit}),
    "bump": lambda commit: (("bump", commit, "--dry-run"), {}),
}


def test_the_hostile_specs_are_the_sizes_the_issue_names() -> None:
    added = {name: len(build()) - len(SPEC_TEXT) for name, build in HOSTILE.items()}
    assert 150_000 < added["ref-chain"] < 250_000
    assert 25_000 < added["object-graph"] < 40_000
    assert len(many_schemas(SPEC_TEXT)) < MAX_YAML_BYTES
    assert 3_000_000 < len(big_enum(SPEC_TEXT)[0]) < MAX_YAML_BYTES


@pytest.mark.parametrize("verb", VERBS)
@pytest.mark.parametrize("hostile", HOSTILE)
def test_every_verb_refuses_a_hostile_spec_in_one_line(
    project: Path, upstream: Upstream, run: Callable[..., Result], no_generation: list[str], hostile: str, verb: str
) -> None:
    """Each of these hung a verb for minutes; now each is one line and exit 2, and nothing is written."""
    commit = upstream.commit_bytes(HOSTILE[hostile]().encode(), f"hostile: {hostile}")
    args, env = VERBS[verb](commit)
    started = time.monotonic()
    with unchanged(project):
        result = run(project, *args, **env)
    assert time.monotonic() - started < 10  # the issue's bound; the reader's refusal takes a fraction of a second
    assert result.code == 2, result.text
    errors = [line for line in result.err.splitlines() if line.startswith("codegen: error: ")]
    assert len(errors) == 1 and SAID[hostile] in errors[0], result.text
    assert f"runtime@{commit[:7]}:spec/openapi.yml:" in errors[0]
    assert "Traceback" not in result.text and "set_int_max_str_digits" not in result.text
    assert not no_generation  # refused before the generators were handed anything
