"""The command line: exit statuses, messages instead of tracebacks, rebuild-runtime."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.codegen.conftest import (
    PIN,
    ROOT,
    Result,
    run_in_process,
    run_subprocess,
    unchanged,
)


def test_no_verb_is_a_usage_error(tmp_path: Path) -> None:
    result = run_in_process(tmp_path, env={})
    assert result.code == 2 and "usage:" in result.err


def test_errors_are_messages_not_tracebacks(tmp_path: Path) -> None:
    result = run_in_process(tmp_path, "generate", env={"E2B_CODEGEN_CACHE": str(tmp_path / "cache")})
    assert result.code == 2
    assert result.err.startswith("error: pyproject.toml: cannot read [tool.codegen]")
    assert "Traceback" not in result.err


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    from codegen.cli import main
    from codegen.errors import CodegenError

    with pytest.raises(CodegenError):
        main(["--debug", "--root", str(tmp_path), "generate"])


def test_rebuild_runtime_prints_the_pinned_commit(tmp_path: Path) -> None:
    result = run_subprocess(tmp_path, "rebuild-runtime", str(tmp_path / "runtime"), env={})
    assert result.code == 0, result.text
    lines = result.out.splitlines()
    assert len(lines) == 2 and lines[-1].startswith(PIN)
    again = run_in_process(tmp_path, "rebuild-runtime", str(tmp_path / "runtime"), env={})
    assert again.code == 2 and "exists and is not an empty directory" in again.err


def test_the_real_project_root_is_the_default() -> None:
    from codegen.cli import ROOT as CLI_ROOT

    assert CLI_ROOT == ROOT


def test_a_failed_write_is_a_message_exit_2_and_rolled_back(
    project: Path, run: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An OSError while writing the tree (disk full, permissions) is not drift (1) nor a traceback."""
    model = project / "packages/python-sdk/e2b/api/client/models/new_sandbox.py"
    model.write_text("edited\n")
    real = os.replace
    calls = 0

    def failing(src: object, dst: object) -> None:
        nonlocal calls
        calls += 1
        if calls == 3:
            raise OSError(28, "No space left on device")
        real(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", failing)
    with unchanged(project):
        result = run(project, "generate")
    assert result.code == 2, result.text
    assert "error: [Errno 28] No space left on device" in result.err
