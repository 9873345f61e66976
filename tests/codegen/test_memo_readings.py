"""The suite's memo of griffe's, the validator's and bump's type-check's readings answers what the real ones do."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from codegen.api_changes import compare
from codegen.api_changes.generated_names import generated_names as real_generated_names
from codegen.api_changes.generated_names import parser_records
from codegen.api_changes.report import ApiChangeReport
from codegen.commands import handwritten
from codegen.commands.handwritten import handwritten_check
from codegen.generation.unasync import unasync_source as real_unasync_source
from codegen.messages import Messages
from codegen.openapi.document import validate_openapi as real_validate
from python_api.distributions import Distribution
from python_api.reader import read_api as real_read_api
from tests.codegen.conftest import ROOT, generated_files
from tests.codegen.memo_readings import (
    memo_generated_names,
    memo_read_api,
    memo_typecheck,
    memo_unasync_source,
    memo_validate_openapi,
)
from toolkit.errors import ToolError
from toolkit.paths import Project

# Two problems: a path without its leading slash, an operation without responses.
INVALID = {
    "openapi": "3.0.3",
    "info": {"title": "t", "version": "1"},
    "paths": {"/ok": {"get": {"responses": {"200": {"description": "ok"}}}}, "bad": {"get": {}}},
}


VALID = {"openapi": "3.0.3", "info": {"title": "t", "version": "1"}}
ID = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
OK = {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}}}


def counting(real: Any, calls: list[object]) -> Any:
    def count(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return real(*args, **kwargs)

    return count


def test_a_remembered_verdict_is_the_validator_s_with_the_caller_s_locations(tmp_path: Path) -> None:
    calls: list[object] = []
    memo = memo_validate_openapi(tmp_path, counting(real_validate, calls))
    where = lambda pointer: f"spec.yml{pointer}"  # noqa: E731
    first = memo(INVALID, where=where)
    assert first == real_validate(INVALID, where=where) and first
    elsewhere = memo(INVALID, where=lambda pointer: f"other.yml{pointer}")
    assert len(calls) == 1  # answered from the memo
    assert [p.where for p in elsewhere] == [p.where.replace("spec.yml", "other.yml") for p in first if p.where]
    assert [p.message for p in elsewhere] == [p.message for p in first]
    # Another worker reads the shared folder: the same answer, the validator not asked again.
    assert memo_validate_openapi(tmp_path, counting(real_validate, calls))(INVALID, where=where) == first
    assert len(calls) == 1


def test_an_int_key_and_a_string_key_are_two_specs(tmp_path: Path) -> None:
    calls: list[object] = []
    memo = memo_validate_openapi(tmp_path, counting(real_validate, calls))
    as_text = {**INVALID, "paths": {"/ok": {"get": {"responses": {"200": {"description": "ok"}}}}}}
    as_int = {**INVALID, "paths": {"/ok": {"get": {"responses": {200: {"description": "ok"}}}}}}
    assert memo(as_text) == real_validate(as_text)
    assert memo(as_int) == real_validate(as_int)
    assert len(calls) == 2


def test_a_remembered_reading_is_griffe_s_and_a_changed_file_is_read_again(tmp_path: Path) -> None:
    package = Distribution("demo", "packages/demo")
    folder = tmp_path / "demo"
    (folder / "demo").mkdir(parents=True)
    (folder / "demo" / "__init__.py").write_text("def hello(name: str, loud: bool = False) -> str: ...\n")
    calls: list[object] = []
    memo = memo_read_api(tmp_path / "memo", counting(real_read_api, calls))
    (tmp_path / "memo").mkdir()
    assert memo(package, folder) == real_read_api(package, folder) == memo(package, folder)
    assert len(calls) == 1
    (folder / "demo" / "__init__.py").write_text("def hello(name: str) -> str: ...\n")
    assert memo(package, folder) == real_read_api(package, folder)
    assert len(calls) == 2


def test_a_failed_reading_is_not_remembered(tmp_path: Path) -> None:
    package = Distribution("demo", "packages/demo")
    (tmp_path / "demo" / "demo").mkdir(parents=True)
    (tmp_path / "demo" / "demo" / "__init__.py").write_text("def broken(:\n")
    calls: list[object] = []
    memo = memo_read_api(tmp_path, counting(real_read_api, calls))
    for _ in range(2):
        with pytest.raises(ToolError):
            memo(package, tmp_path / "demo")
    assert len(calls) == 2 and not list(tmp_path.glob("*.json"))


def test_a_remembered_check_is_the_real_one_placed_in_the_new_copy(
    packages_only: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bump's check, answered from the memo, gives the verdict real mypy and the real import gave.

    The import's failure is placed by its traceback's frames, which name the copy's folder: a new folder
    each time, so only a memo that puts the new copy's folder back gives the same lines.
    """
    started: list[str] = []

    class Counted(handwritten._Process):
        def __init__(self, command: list[str], cwd: Path | None, timeout: float, what: str, **kw: Any) -> None:
            started.append(what)
            super().__init__(command, cwd, timeout, what, **kw)

    (tmp_path / "memo").mkdir()
    check, process = memo_typecheck(tmp_path / "memo", handwritten._Check, Counted)
    monkeypatch.setattr(handwritten, "_Check", check)
    monkeypatch.setattr(handwritten, "_Process", process)
    logic = packages_only / "packages/python-sdk/e2b/__init__.py"
    # A name looked up as the package loads, which mypy cannot see (a module's attributes are Any to it).
    gone = '_GONE = importlib.import_module("e2b.api.client.models").NoSuchModel'
    logic.write_text(logic.read_text() + f"\nimport importlib\n\n{gone}\n")
    line = len(logic.read_text().splitlines())
    generated = generated_files(packages_only)
    generated["packages/python-sdk/e2b/api/client/models/new_sandbox.py"] += b"\n# regenerated\n"

    def verdict() -> handwritten.Verdict:
        # codegen's own record of the findings: each check starts without it.
        shutil.rmtree(tmp_path / "cache", ignore_errors=True)
        with handwritten_check(Project(packages_only), generated, Messages(err=print, out=print)) as pending:
            return pending.verdict(ApiChangeReport(()), [])

    first = verdict()
    # The regenerated copy, then (it has findings) the tree as it is, each by mypy and an import.
    assert sorted(started) == sorted(["the import of the packages", "mypy"] * 2)
    placed = {(b.path, b.line, b.said_by) for b in first.breakages}
    assert ("packages/python-sdk/e2b/__init__.py", line, "import") in placed, first.section
    assert verdict() == first
    assert len(started) == 4  # nothing ran
    # Another limit is another question, answered by a real process; its failure is not remembered.
    monkeypatch.setattr(handwritten, "MYPY_TIMEOUT", 0.001)
    with pytest.raises(ToolError, match="mypy took more than"):
        verdict()
    assert started[4:] == ["mypy"]  # the import, asked as before, was answered
    with pytest.raises(ToolError, match="mypy took more than"):
        verdict()
    assert started[5:] == ["mypy"]


def test_a_remembered_parse_is_the_generator_s_and_its_record_is_kept_as_codegen_keeps_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = {
        **VALID,
        "paths": {"/things/{id}": {"get": {"operationId": "getThing", "parameters": [ID], "responses": OK}}},
    }
    spec["components"] = {"schemas": {"Thing": {"type": "object", "properties": {"name": {"type": "string"}}}}}
    calls: list[object] = []
    memo = memo_generated_names(tmp_path, counting(real_generated_names, calls))
    monkeypatch.setenv("E2B_CODEGEN_CACHE", str(tmp_path / "cache"))
    records = parser_records(Project(ROOT))
    first = memo(spec, compare._path_key, records=records)
    assert first == real_generated_names(spec, compare._path_key)
    assert first.at == {("GET", "/things/{}", "200 response"): "Thing"}
    # Another test: its own empty cache, the memo's answer, and codegen's record written all the same.
    monkeypatch.setenv("E2B_CODEGEN_CACHE", str(tmp_path / "other-cache"))
    other = parser_records(Project(ROOT))
    assert memo(spec, compare._path_key, records=other) == first and len(calls) == 1
    assert real_generated_names(spec, compare._path_key, records=other) == first  # recalled from that record
    # Another path key is the real function's question.
    memo(spec, lambda path: path)
    assert len(calls) == 2


def test_a_remembered_twin_is_unasync_s_and_a_refusal_is_not_remembered(tmp_path: Path) -> None:
    calls: list[object] = []
    memo = memo_unasync_source(tmp_path, counting(real_unasync_source, calls))
    source = b"async def f(client: AsyncClient) -> None:\n    await client.aclose()\n"
    assert memo(source, "e2b/a.py") == real_unasync_source(source, "e2b/a.py") == memo(source, "e2b/a.py")
    assert len(calls) == 1
    for _ in range(2):
        with pytest.raises(ToolError, match=r"e2b/b\.py"):
            memo(b"async def (:\n", "e2b/b.py")
    assert len(calls) == 3
