"""codegen.generation.overlays: what a template may name, and how each way of failing is reported."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codegen.generation.overlays import load_overlays, render_overlays
from toolkit.errors import ToolError

# A filtered spec as the pipeline hands it over: operations named by the map.
SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "paths": {
        "/sandboxes/{sandboxID}/pause": {
            "post": {
                "operationId": "pauseSandbox",
                "tags": ["sandboxes", "Other Tag"],
                "responses": {"200": {}, "204": {}, "409": {}},
                "requestBody": {
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PauseBody"}}}
                },
            }
        },
        "/sandboxes": {"get": {"operationId": "listSandboxes", "tags": ["Sandbox Lists"], "responses": {"2XX": {}}}},
    },
    "components": {
        "schemas": {
            "PauseBody": {"type": "object"},
            "Error": {
                "type": "object",
                "properties": {"error_code": {"type": "string", "enum": ["sandbox_pause_refused"]}},
            },
        }
    },
}


def overlays(tmp_path: Path, template: str, *, extra: str = "") -> Path:
    """A templates/overlays folder with one template, rendered to e2b/api/out.py (`extra`: more of its entry)."""
    folder = tmp_path / "overlays"
    folder.mkdir()
    (folder / "t.py.jinja").write_text(template, encoding="utf-8")
    entry = '[[overlay]]\ntemplate = "t.py.jinja"\noutput = "packages/python-sdk/e2b/api/out.py"\n' + extra
    (folder / "overlays.toml").write_text(entry, encoding="utf-8")
    return folder


def failure(folder: Path) -> tuple[str, str | None]:
    with pytest.raises(ToolError) as raised:
        render_overlays(folder, SPEC)
    (problem,) = raised.value.problems
    return problem.message, problem.where


def test_a_template_names_operations_error_codes_and_request_models_from_the_spec(tmp_path: Path) -> None:
    template = (
        '{% set op = require_operation("pauseSandbox") %}{% set _ = require_error_code("sandbox_pause_refused") %}'
        'MODEL = {{ request_model("pauseSandbox") }}\n'
        "PATH = {{ op.path | py }}\n"
    )
    rendered = render_overlays(overlays(tmp_path, template), SPEC)
    assert rendered == {
        "packages/python-sdk/e2b/api/out.py": b'MODEL = PauseBody\nPATH = "/sandboxes/{sandboxID}/pause"\n'
    }


def test_a_template_has_each_operations_module_and_success_statuses(tmp_path: Path) -> None:
    template = (
        '{% set place = operation_module("pauseSandbox") %}'
        "from e2b.api.client.api.{{ place.tag }} import {{ place.module }}\n"
        "PATH = {{ place.path | py }}\n"
        'SUCCESS = {{ success_statuses("pauseSandbox") | py }}\n'
    )
    rendered = render_overlays(overlays(tmp_path, template), SPEC)
    assert rendered["packages/python-sdk/e2b/api/out.py"].decode() == (
        "from e2b.api.client.api.sandboxes import pause_sandbox\n"
        'PATH = "e2b.api.client.api.sandboxes.pause_sandbox"\n'
        "SUCCESS = [200, 204]\n"  # 409 is not a success, whatever the SDK makes of it
    )


def test_an_operation_whose_first_tag_the_client_generator_renames_has_no_module_to_name(tmp_path: Path) -> None:
    message, where = failure(overlays(tmp_path, '{% set _ = operation_module("listSandboxes") %}\n'))
    assert message.startswith("asks for the module of 'listSandboxes', whose first tag is not a plain lower-case word")
    assert where == "templates/overlays/t.py.jinja"


def test_an_operation_without_a_2xx_status_has_no_success_to_expect(tmp_path: Path) -> None:
    message, _ = failure(overlays(tmp_path, '{% set _ = success_statuses("listSandboxes") %}\n'))
    assert message == (
        "asks for the success statuses of 'listSandboxes', whose responses list no 2xx status (a 2XX range names none)"
    )


def test_an_unknown_error_code_fails_naming_it_and_the_template(tmp_path: Path) -> None:
    message, where = failure(overlays(tmp_path, '{{ require_error_code("sandbox_vanished") }}\n'))
    assert message == "names error code 'sandbox_vanished', which the spec does not document"
    assert where == "templates/overlays/t.py.jinja"


def test_an_unknown_operation_fails_naming_it_and_the_template(tmp_path: Path) -> None:
    message, where = failure(overlays(tmp_path, '{% set _ = require_operation("resumeSandbox") %}\n'))
    assert message == "names operation 'resumeSandbox', which spec/operations.yml does not map"
    assert where == "templates/overlays/t.py.jinja"


def test_a_request_model_of_an_operation_without_a_json_body_ref_fails(tmp_path: Path) -> None:
    message, where = failure(overlays(tmp_path, '{{ request_model("listSandboxes") }}\n'))
    assert message.startswith("asks for the request body model of 'listSandboxes', whose JSON request body is not")
    assert where == "templates/overlays/t.py.jinja"


@pytest.mark.parametrize("flavour", ["async", "both"])
def test_a_flavour_is_refused_before_anything_renders(tmp_path: Path, flavour: str) -> None:
    """Twins are made one way: the async code by hand, its sync twin derived (codegen/generation/unasync.py)."""
    folder = overlays(tmp_path, "X = 1\n", extra=f'flavour = "{flavour}"\n')
    with pytest.raises(ToolError) as raised:
        load_overlays(folder)
    (problem,) = raised.value.problems
    assert problem.message == "[[overlay]] #1 (template 't.py.jinja'): templates have no flavours"
    assert problem.where == "templates/overlays/overlays.toml"
    assert problem.remedy is not None and "codegen/generation/unasync.py" in problem.remedy
    assert failure(folder) == (problem.message, problem.where)


@pytest.mark.parametrize(
    ("template", "line", "says"),
    [
        pytest.param("X = 1\n{% if %}\n", 2, "cannot render: Expected an expression", id="syntax"),
        pytest.param(
            "X = 1\nY = 2\n{% if no_such_name %}{% endif %}\n",
            3,
            "cannot render: 'no_such_name' is undefined",
            id="undefined",
        ),
        pytest.param(
            "X = 1\nY = {{ no_such_name }}\n", 2, "cannot render: 'no_such_name' is undefined", id="undefined-output"
        ),
        pytest.param('{{ require_operation("pauseSandbox").path }}\n', 1, "cannot render: renders", id="unescaped"),
    ],
)
def test_a_template_error_names_the_template_line(tmp_path: Path, template: str, line: int, says: str) -> None:
    message, where = failure(overlays(tmp_path, template))
    assert message.startswith(says), message
    assert where == f"templates/overlays/t.py.jinja:{line}"


def test_an_unreadable_index_is_reported_with_its_path(tmp_path: Path) -> None:
    folder = overlays(tmp_path, "X = 1\n")
    (folder / "overlays.toml").write_text('[[overlay]]\ntemplate = "t.py.jinja"\n', encoding="utf-8")
    message, where = failure(folder)
    assert message == "cannot read the overlay index: 'output'"
    assert where == "templates/overlays/overlays.toml"


@pytest.mark.parametrize(
    ("output", "says"),
    [
        ("/tmp/x.py", "is not a normalized relative path"),
        ("packages/python-sdk/e2b/api/../../../../README.md", "is not a normalized relative path"),
        ("packages/python-sdk/e2b/api/./out.py", "is not a normalized relative path"),
        ("packages/python-sdk/e2b/api//out.py", "is not a normalized relative path"),
        ("packages/python-sdk/e2b/api/", "is not a normalized relative path"),
        ("packages/python-sdk/e2b/api\\..\\x.py", "is not a normalized relative path"),
        ("packages/python-sdk/e2b/api", "lies outside the generated folders"),
        ("packages/python-sdk/e2b/client.py", "lies outside the generated folders"),
        ("README.md", "lies outside the generated folders"),
        ("packages/python-sdk/e2b/sandbox_sync/out.py", "lies in the sync twins' folder"),
        ("packages/python-sdk/e2b/apix/out.py", "lies outside the generated folders"),
        (7, "is not a path"),
        # Git's own folder, which `git status` never shows: a hook written there runs on the next commit.
        ("packages/python-sdk/e2b/api/.git/hooks/pre-commit", "has a '.git' part"),
        ("packages/python-sdk/e2b/api/.GIT/config", "has a '.git' part"),
        ("packages/python-sdk/e2b/api/.git./hooks/x", "has a '.git' part"),
        ("packages/local-api/e2b_local_api/wire/.git", "has a '.git' part"),
    ],
)
def test_an_output_outside_the_generated_folders_is_refused_naming_the_entry(
    tmp_path: Path, output: object, says: str
) -> None:
    folder = overlays(tmp_path, "X = 1\n")
    index = folder / "overlays.toml"
    index.write_text(
        index.read_text() + f'\n[[overlay]]\ntemplate = "t.py.jinja"\noutput = {json.dumps(output)}\n', encoding="utf-8"
    )
    with pytest.raises(ToolError) as raised:
        load_overlays(folder)
    (problem,) = raised.value.problems
    assert problem.message.startswith(f"[[overlay]] #2 (template 't.py.jinja'): output {output!r} {says}")
    assert problem.where == "templates/overlays/overlays.toml"
    assert problem.remedy is not None and "packages/python-sdk/e2b/api" in problem.remedy


def test_two_entries_with_one_output_are_refused(tmp_path: Path) -> None:
    folder = overlays(tmp_path, "X = 1\n")
    index = folder / "overlays.toml"
    index.write_text(index.read_text() * 2, encoding="utf-8")
    with pytest.raises(ToolError, match=r"#2 .*'packages/python-sdk/e2b/api/out.py' is also the output of an earlier"):
        load_overlays(folder)


def test_a_git_like_name_that_is_not_gits_folder_is_accepted(tmp_path: Path) -> None:
    folder = overlays(tmp_path, "X = 1\n")
    index = folder / "overlays.toml"
    index.write_text(index.read_text().replace("e2b/api/out.py", "e2b/api/.github_notes.py"), encoding="utf-8")
    assert [o.output for o in load_overlays(folder)] == ["packages/python-sdk/e2b/api/.github_notes.py"]


def test_the_shipped_index_is_accepted() -> None:
    assert load_overlays(Path(__file__).resolve().parents[3] / "templates" / "overlays")
