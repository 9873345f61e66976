"""The command line: exit statuses, messages instead of tracebacks, rebuild-runtime."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.codegen.conftest import PIN, ROOT, run_in_process, run_subprocess


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
