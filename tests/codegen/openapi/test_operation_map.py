"""spec/operations.yml: reading it, refusing bad entries, and naming the filtered spec's operations."""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.openapi.document import load_spec
from codegen.openapi.operation_map import (
    UPSTREAM_OPERATION_ID,
    MappedOperation,
    check_operation_map,
    load_operation_map,
    name_operations,
)
from codegen.openapi.sdk_filter import filter_spec
from toolkit.errors import ToolError

ROOT = Path(__file__).resolve().parents[3]

SPEC = """\
openapi: 3.0.3
info: {title: Ops, version: "1"}
paths:
  /sandboxes:
    post:
      tags: [sandboxes]
      responses: {"201": {description: created}}
    get:
      operationId: upstreamList
      tags: [sandboxes]
      responses: {"200": {description: listed}}
  /sandboxes/{sandboxID}/pause:
    post:
      operationId: sandboxes_pause
      tags: [sandboxes]
      parameters:
        - {name: sandboxID, in: path, required: true, schema: {type: string}}
      responses: {"204": {description: paused}}
  /templates:
    get:
      tags: [templates]
      responses: {"200": {description: listed}}
"""


def write_map(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "operations.yml"
    path.write_text(text)
    return path


def problems_of(path: Path) -> list[str]:
    with pytest.raises(ToolError) as caught:
        load_operation_map(path, display_path="spec/operations.yml")
    return [problem.render() for problem in caught.value.problems]


def test_the_repository_map_names_the_sdk_operations() -> None:
    names = {entry.name: entry.endpoint for entry in load_operation_map(ROOT / "spec" / "operations.yml")}
    assert names["pauseSandbox"] == "POST /sandboxes/{sandboxID}/pause"
    assert names["listSandboxes"] == "GET /v2/sandboxes"
    assert names["listSnapshots"] == "GET /snapshots"
    assert names["listTemplates"] == "GET /templates"
    assert len(names) == 15


def test_an_entry_is_read_as_method_and_path(tmp_path: Path) -> None:
    [entry] = load_operation_map(write_map(tmp_path, "pauseSandbox: POST /sandboxes/{sandboxID}/pause\n"))
    assert entry == MappedOperation("pauseSandbox", "post", "/sandboxes/{sandboxID}/pause")
    assert entry.pointer == "/paths/~1sandboxes~1{sandboxID}~1pause/post"


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("pause-sandbox: POST /a\n", "'pause-sandbox' is not a Python identifier"),
        ("2pause: POST /a\n", "'2pause' is not a Python identifier"),
        ("class: POST /a\n", "'class' is a Python keyword"),
        ("pauseSandbox: FETCH /a\n", "pauseSandbox: 'FETCH /a' is not `METHOD /path`"),
        ("pauseSandbox: post /a\n", "is not `METHOD /path`"),
        ("pauseSandbox: POST a\n", "is not `METHOD /path`"),
        ("pauseSandbox: [POST, /a]\n", "is not `METHOD /path`"),
        ("- POST /a\n", "must be a mapping of name: METHOD /path"),
    ],
)
def test_bad_entries_are_refused_with_their_line(tmp_path: Path, text: str, complaint: str) -> None:
    [message] = problems_of(write_map(tmp_path, text))
    assert message.startswith("spec/operations.yml:1 ")
    assert complaint in message


def test_two_names_for_one_operation_are_refused_naming_both(tmp_path: Path) -> None:
    path = write_map(tmp_path, "pauseSandbox: POST /p\nother: GET /q\nfreezeSandbox: POST /p\n")
    [message] = problems_of(path)
    assert message.startswith("spec/operations.yml:3 (/freezeSandbox): pauseSandbox and freezeSandbox both map POST /p")
    assert "remove one of the two entries" in message


def test_two_names_for_one_module_are_refused(tmp_path: Path) -> None:
    [message] = problems_of(write_map(tmp_path, "pauseSandbox: POST /p\npause_sandbox: POST /q\n"))
    assert "pauseSandbox and pause_sandbox would both be generated as module pause_sandbox" in message


def test_a_name_written_twice_is_refused_by_the_yaml_reader(tmp_path: Path) -> None:
    [message] = problems_of(write_map(tmp_path, "pauseSandbox: POST /p\npauseSandbox: POST /q\n"))
    assert "spec/operations.yml:2" in message and "pauseSandbox" in message


def test_a_missing_map_is_reported(tmp_path: Path) -> None:
    [message] = problems_of(tmp_path / "nope.yml")
    assert "cannot read the operation map" in message


def test_a_mapped_operation_the_spec_lacks_is_a_miss_with_pointer_and_line() -> None:
    doc = load_spec(SPEC.encode())
    entries = (
        MappedOperation("killSandbox", "delete", "/sandboxes"),
        MappedOperation("resumeSandbox", "post", "/sandboxes/{sandboxID}/resume"),
        MappedOperation("listTemplates", "get", "/templates"),
        MappedOperation("pauseSandbox", "post", "/sandboxes/{sandboxID}/pause"),
    )
    kill, resume, templates = check_operation_map(doc, entries, ("sandboxes",))
    assert kill.where == f"spec/openapi.yml:{doc.line_of('/paths/~1sandboxes')} (/paths/~1sandboxes/delete)"
    assert kill.message == "operation map miss: killSandbox is DELETE /sandboxes, which the spec does not have"
    assert kill.remedy is not None and "bump" in kill.remedy
    assert resume.where == "spec/openapi.yml:3 (/paths/~1sandboxes~1{sandboxID}~1resume/post)"
    assert "tagged ['templates'], none of the SDK's tags (sandboxes)" in templates.message


def test_filtering_names_mapped_operations_and_unnames_the_rest() -> None:
    doc = load_spec(SPEC.encode())
    entries = (
        MappedOperation("createSandbox", "post", "/sandboxes"),
        MappedOperation("pauseSandbox", "post", "/sandboxes/{sandboxID}/pause"),
    )
    filtered = filter_spec(doc.data, tags=["sandboxes"], operations=entries)
    create = filtered["paths"]["/sandboxes"]["post"]
    listing = filtered["paths"]["/sandboxes"]["get"]
    pause = filtered["paths"]["/sandboxes/{sandboxID}/pause"]["post"]
    assert create["operationId"] == "createSandbox" and UPSTREAM_OPERATION_ID not in create
    assert pause["operationId"] == "pauseSandbox" and pause[UPSTREAM_OPERATION_ID] == "sandboxes_pause"
    # Unmapped: the generator names it from method and path, whatever the upstream called it.
    assert "operationId" not in listing and listing[UPSTREAM_OPERATION_ID] == "upstreamList"
    # The input is untouched; without a map the upstream's ids stay.
    assert doc.data["paths"]["/sandboxes"]["get"]["operationId"] == "upstreamList"
    assert filter_spec(doc.data, tags=["sandboxes"])["paths"]["/sandboxes"]["get"]["operationId"] == "upstreamList"


def test_naming_is_idempotent() -> None:
    spec = load_spec(SPEC.encode()).data
    entries = (MappedOperation("pauseSandbox", "post", "/sandboxes/{sandboxID}/pause"),)
    name_operations(spec, entries)
    name_operations(spec, entries)
    pause = spec["paths"]["/sandboxes/{sandboxID}/pause"]["post"]
    assert pause["operationId"] == "pauseSandbox" and pause[UPSTREAM_OPERATION_ID] == "sandboxes_pause"
