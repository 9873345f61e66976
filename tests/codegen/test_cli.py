"""The command line: exit statuses, messages instead of tracebacks, rebuild-runtime."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from codegen.cli import RUN_LOCK
from codegen.tree.file_lock import held
from tests.child_output import stderr_until
from tests.codegen.conftest import (
    PIN,
    ROOT,
    Result,
    git_status,
    run_in_process,
    run_subprocess,
    start_subprocess,
    unchanged,
)
from toolkit.signals import Terminated
from toolkit.transaction import JOURNAL


def test_no_verb_is_a_usage_error(tmp_path: Path) -> None:
    result = run_in_process(tmp_path, env={})
    assert result.code == 2 and "usage:" in result.err


def test_errors_are_messages_not_tracebacks(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    result = run_in_process(tmp_path / "root", "generate", env={"E2B_CODEGEN_CACHE": str(tmp_path / "cache")})
    assert result.code == 2
    assert result.err.startswith("codegen: error: pyproject.toml: cannot read [tool.codegen]")
    assert "Traceback" not in result.err


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    from codegen.cli import main
    from toolkit.errors import ToolError

    with pytest.raises(ToolError):
        main(["--debug", "--root", str(tmp_path), "generate"])


def test_rebuild_runtime_prints_each_commit_and_refuses_a_used_folder(tmp_path: Path) -> None:
    runtime = tmp_path / "runtime"
    # Reads ROOT's history, writes nothing there; no tools run.
    result = run_subprocess(ROOT, "rebuild-runtime", str(runtime), env={}, tools="real")
    assert result.code == 0, result.text
    # The commits as git itself lists them, oldest first: the last is the pin.
    listed = subprocess.run(
        ["git", "log", "--reverse", "--format=%H  %s", "main"], cwd=runtime, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert listed[-1].startswith(f"{PIN}  ")
    assert result.out.splitlines() == [f"codegen: rebuilt the runtime repository in {runtime}:"] + [
        f"  {line}" for line in listed
    ]

    def everything() -> dict[Path, bytes]:  # .git included: nothing of the repository may change
        return {path: path.read_bytes() for path in sorted(runtime.rglob("*")) if path.is_file()}

    before = everything()
    again = run_in_process(ROOT, "rebuild-runtime", str(runtime), env={})
    assert again.code == 2
    assert again.err == (
        f"codegen: error: {runtime} exists and is not an empty directory; "
        "refusing to build the runtime repository there\n"
    )
    assert everything() == before


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
        calls += Path(str(dst)).is_relative_to(project)  # the cache's own renames do not count
        if calls == 3:
            raise OSError(28, "No space left on device")
        real(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", failing)
    with unchanged(project):
        result = run(project, "generate")
    assert result.code == 2, result.text
    assert "codegen: error: [Errno 28] No space left on device" in result.err


# --- interruptions, leftovers and the run lock, end to end -----------------------------------

MODEL = "packages/python-sdk/e2b/api/client/models/new_sandbox.py"


@pytest.mark.usefixtures("default_signals")
def test_ctrl_c_during_the_write_finishes_it_and_says_so(
    project: Path, run: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / MODEL).write_text("edited\n")
    real = os.replace
    calls = 0

    def interrupted(src: object, dst: object) -> None:
        nonlocal calls
        calls += Path(str(dst)).is_relative_to(project)  # the cache's own renames do not count
        if calls == 3:
            os.kill(os.getpid(), signal.SIGINT)
        real(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", interrupted)
    result = run(project, "generate")
    monkeypatch.undo()
    assert result.code == 130, result.text
    assert (
        "codegen: interrupted: SIGINT arrived during the write, which finished first: the tree holds the new files"
        in (result.err)
    )
    assert "nothing was written" not in result.err
    assert run(project, "check").code == 0


def _leave_an_interrupted_write(project: Path) -> None:
    """What a run killed mid-swap leaves: the journal, the old folder aside, the new one in place."""
    api = project / "packages/python-sdk/e2b/api"
    old = api.with_name(".api.codegen-old-0123abcd")
    shutil.copytree(api, old)
    (api / "error_codes.py").write_text("half-new\n")
    (project / JOURNAL).write_text(
        json.dumps(
            {
                "state": "swapping",
                "tag": "0123abcd",
                "written": "2026-11-30 12:00:00Z",
                "swaps": [{"target": "packages/python-sdk/e2b/api", "existed": True}],
            }
        )
    )


def test_the_check_recovers_an_interrupted_write_and_reports_it(project: Path, run: Callable[..., Result]) -> None:
    _leave_an_interrupted_write(project)
    result = run(project, "check")
    assert result.code == 1, result.text
    assert "found a write from 2026-11-30 12:00:00Z that was interrupted: rolled back" in result.err
    assert f"  interrupted write {JOURNAL}" in result.out and "run the check again" in result.out
    assert git_status(project) == ""
    assert run(project, "check").code == 0


def test_generate_recovers_an_interrupted_write_first(project: Path, run: Callable[..., Result]) -> None:
    _leave_an_interrupted_write(project)
    result = run(project, "generate")
    assert result.code == 0, result.text
    assert "rolled back, the tree holds what it held before" in result.err
    assert "nothing written" in result.out and git_status(project) == ""


def test_leftovers_without_a_journal_are_drift_and_generate_removes_them(
    project: Path, run: Callable[..., Result]
) -> None:
    stray = ["packages/python-sdk/e2b/.api.codegen-old-89abcdef", "spec/.openapi.lock.json.codegen-new-89abcdef"]
    shutil.copytree(project / "packages/python-sdk/e2b/api", project / stray[0])
    (project / stray[1]).write_text("{}\n")
    checked = run(project, "check")
    assert checked.code == 1
    assert all(f"  leftover         {path}" in checked.out for path in stray)
    generated = run(project, "generate")
    assert generated.code == 0 and f"removed 2 entr(y/ies) an interrupted write left: {', '.join(stray)}" in (
        generated.err
    )
    assert git_status(project) == "" and run(project, "check").code == 0


def test_a_second_run_on_the_tree_waits_then_gives_up_naming_the_holder(
    project: Path, run: Callable[..., Result]
) -> None:
    with held(project / RUN_LOCK, "test"):
        with unchanged(project):
            result = run(project, "check", E2B_CODEGEN_LOCK_TIMEOUT="0.2")
    assert result.code == 2, result.text
    assert f"the working tree {project} is in use by pid {os.getpid()}" in result.err
    assert "gave up after 0.2 s" in result.err and "E2B_CODEGEN_LOCK_TIMEOUT" in result.err


def test_a_second_run_waits_for_the_first_and_then_runs(project: Path, env: dict[str, str | None]) -> None:
    (project / MODEL).write_text("edited\n")
    with held(project / RUN_LOCK, "test"):
        proc = start_subprocess(project, "generate", env=env)
        seen = stderr_until(proc, lambda lines: "waiting for the working tree" in lines[-1])
        assert seen and f"in use by pid {os.getpid()}" in seen[-1], "".join(seen)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    assert MODEL in out and git_status(project) == ""


def test_two_concurrent_runs_on_one_tree_both_succeed(project: Path, env: dict[str, str | None]) -> None:
    (project / MODEL).write_text("edited\n")
    procs = [start_subprocess(project, "generate", env=env) for _ in range(2)]
    outputs = [p.communicate(timeout=600) for p in procs]  # reads both pipes while waiting: no pipe fills
    results = [(p.returncode, out, err) for p, (out, err) in zip(procs, outputs, strict=True)]
    assert [code for code, _, _ in results] == [0, 0], results
    assert "Traceback" not in "".join(err for _, _, err in results)
    assert git_status(project) == ""


# --- what finalizers raise while a run is on (codegen.cli._unraisable) ---------------------------------


class _Unraisable:
    """What sys.unraisablehook is handed: the exception a finalizer could not raise."""

    def __init__(self, exc: BaseException) -> None:
        self.exc_type, self.exc_value, self.exc_traceback = type(exc), exc, None
        self.err_msg, self.object = None, None


def test_a_signal_raised_inside_a_finalizer_is_said_at_the_run_s_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The handler raised where a finalizer ran, which cannot raise: the run goes on, and says so at its end."""
    import codegen.cli

    class Collected:
        def __del__(self) -> None:
            raise Terminated()  # as SIGTERM's handler does when the signal lands here

    def verb(project: object, args: object, messages: object) -> int:
        Collected()  # collected at once
        return 0

    monkeypatch.setattr(codegen.cli, "cmd_rebuild_runtime", verb)
    code = codegen.cli.main(["--root", str(tmp_path), "rebuild-runtime", str(tmp_path / "dest")])
    err = capsys.readouterr().err
    assert code == 0
    assert "codegen: warning: SIGTERM arrived while Python ran a finalizer, where it cannot stop the run" in err
    assert "Exception ignored" not in err and "Traceback" not in err


def test_finalizers_complaining_after_a_signal_are_quiet_and_before_it_are_passed_on() -> None:
    import codegen.cli

    passed_on: list[object] = []
    complaint = _Unraisable(ValueError("I/O operation on closed file"))
    codegen.cli._unraisable(passed_on.append, complaint)  # type: ignore[arg-type]
    assert passed_on == [complaint]  # no signal yet: Python's (or pytest's) report, as before
    codegen.cli._INTERRUPTED.set()
    try:
        codegen.cli._unraisable(passed_on.append, complaint)  # type: ignore[arg-type]
    finally:
        codegen.cli._INTERRUPTED.clear()
    assert passed_on == [complaint]


def test_sysconfig_is_filled_before_a_run_does_anything(tmp_path: Path) -> None:
    # CPython 3.11's sysconfig fills its table on first use without a lock: a thread that asks while
    # another fills it reads None (ruff's finder, "ruff" + None, crashed three CI runs' checks). main()
    # fills it first, so no thread a run starts can find it half filled: seen in a fresh interpreter,
    # where nothing had filled it, on a run that fails at once (a folder that is no project).
    script = (
        "import sys, sysconfig\n"
        "import codegen.cli\n"
        "assert sysconfig._CONFIG_VARS is None, 'filled already: the test would prove nothing'\n"
        "status = codegen.cli.main(['--root', sys.argv[1], 'check', '--no-cache'])\n"
        "print(status, sysconfig._CONFIG_VARS is not None)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2", "True"], done.stdout + done.stderr
