"""The suite's memo of griffe's and the validator's readings answers exactly what the real ones do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from codegen.openapi.document import validate_openapi as real_validate
from python_api.distributions import Distribution
from python_api.reader import read_api as real_read_api
from tests.codegen.memo_readings import memo_read_api, memo_validate_openapi
from toolkit.errors import ToolError

# Two problems: a path without its leading slash, an operation without responses.
INVALID = {
    "openapi": "3.0.3",
    "info": {"title": "t", "version": "1"},
    "paths": {"/ok": {"get": {"responses": {"200": {"description": "ok"}}}}, "bad": {"get": {}}},
}


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
