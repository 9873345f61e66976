"""Ctrl-C and SIGTERM during `release`'s checks (the Python API's, the generated files'), and during its later steps.

An interrupt is said as one: one `release: interrupted: ...` line, exit 130 or 143, never "the
generated files do not match the pin", never a silent death, and nothing written.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import release.runtime_api as runtime_api
from release import cli as release_cli
from release import make_release
from tests.child_output import stderr_until
from tests.codegen.conftest import ROOT, commit_all, git_repo, tree_digest, unchanged
from tests.release.conftest import LOCAL_API, SDK, Result, add_fragment
from tests.signal_dispositions import default_dispositions
from toolkit.signals import Terminated

EXIT_BOUND = 60.0  # seconds from the signal to the exit: generous, for a busy machine


@pytest.fixture
def pending(project: Path) -> Path:
    add_fragment(project, LOCAL_API, "+tidy.misc.md", "Internal tidying.\n")
    return project


@pytest.fixture
def signals() -> Iterator[None]:
    """SIGTERM and SIGINT at their defaults here, whatever the suite was started with; put back after."""
    with default_dispositions():
        yield


def interrupted_lines(result: Result) -> list[str]:
    return [line for line in result.err.splitlines() if "interrupted" in line]


@pytest.mark.parametrize(
    ("ending", "expected"),
    [
        ("raise SystemExit(143)", 143),  # codegen's own answer to SIGTERM
        ("raise SystemExit(130)", 130),  # and to Ctrl-C
        ("import os, signal; os.kill(os.getpid(), signal.SIGTERM)", 143),  # killed before it could answer
        ("import os, signal; signal.signal(signal.SIGINT, signal.SIG_DFL); os.kill(os.getpid(), signal.SIGINT)", 130),
    ],
)
def test_a_check_stopped_by_a_signal_is_an_interrupt_not_drift(
    pending: Path, run: Callable[..., Result], monkeypatch: pytest.MonkeyPatch, ending: str, expected: int
) -> None:
    """The generated-files check's process stopped by a signal: the release says it was interrupted, not drift."""
    monkeypatch.setattr(make_release, "CHECKER", (sys.executable, "-c", ending))
    with unchanged(pending):
        result = run(pending, "release", "--dry-run")
    assert result.code == expected, result.out + result.err
    assert interrupted_lines(result) == ["release: interrupted: nothing was written"]
    assert "do not match the pin" not in result.err and "error:" not in result.err


def test_a_check_that_crashed_could_not_run_it_found_no_drift(
    pending: Path, run: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(make_release, "CHECKER", (sys.executable, "-c", "raise RuntimeError('a bug')"))
    with unchanged(pending):
        result = run(pending, "release", "--dry-run")
    assert result.code == 2, result.out + result.err
    assert "the generated-files check could not run" in result.err and "RuntimeError: a bug" in result.err
    assert "do not match the pin" not in result.err


def test_sigterm_during_the_run_time_api_check_stops_its_probes(
    project: Path, run: Callable[..., Result], monkeypatch: pytest.MonkeyPatch, signals: None
) -> None:
    """SIGTERM while both sides' interpreters import the packages: they are stopped, the run says it was stopped."""
    git_repo(project).create_tag("e2b-v2.0.0")
    add_fragment(project, SDK, "7.fix.md", "A fix.\n")
    started: list[int] = []
    finish = runtime_api._finish

    def signalled(*args: Any) -> runtime_api.RuntimeApi:
        started.append(args[2].pid)
        os.kill(os.getpid(), signal.SIGTERM)  # here, in the main thread, with both probes running
        return finish(*args)

    monkeypatch.setattr(runtime_api, "_finish", signalled)
    with unchanged(project):
        result = run(project, "release", "--dry-run")
    assert result.code == 143, result.out + result.err
    assert interrupted_lines(result) == ["release: interrupted: nothing was written"]
    assert started
    for pid in started:  # the probes and their process groups are gone
        with pytest.raises(ProcessLookupError):
            os.killpg(pid, 0)


def test_a_stop_as_the_check_starts_still_stops_the_check(signals: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGTERM inside Popen, after the fork: the check's process is stopped and waited for, never left running.

    The signal is sent from inside Popen's constructor, where CI once caught it: the check then ran
    on unowned, holding the tree's run lock after the release had said it was interrupted.
    """
    started: list[subprocess.Popen[str]] = []

    class SignalledAsItStarts(subprocess.Popen):  # type: ignore[type-arg]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            started.append(self)
            os.kill(os.getpid(), signal.SIGTERM)  # its handler runs before os.kill returns

    monkeypatch.setattr(subprocess, "Popen", SignalledAsItStarts)  # make_release calls subprocess.Popen
    previous = signal.signal(signal.SIGTERM, release_cli._terminate)
    try:
        with pytest.raises(Terminated):
            make_release._run_checker([sys.executable, "-c", "import time; time.sleep(60)"])
    finally:
        signal.signal(signal.SIGTERM, previous)
        for child in started:
            if child.poll() is None:  # the bug: still running; stopped here so that it outlives no test
                child.kill()
                child.wait()
    assert len(started) == 1
    assert started[0].returncode == -signal.SIGTERM


@pytest.mark.parametrize("at", ["release: check the generated files", "release: build "])
def test_sigterm_to_release_is_an_interrupt_whatever_the_step(
    pending: Path, pristine_upstream: Path, tmp_path: Path, signals: None, at: str
) -> None:
    """`python -m release release`, signalled as the step starts (the check runs for seconds, a build too)."""
    commit_all(pending, "a fragment")
    before = tree_digest(pending)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("E2B_")},
        "E2B_RUNTIME_REPO": str(pristine_upstream),
        "E2B_CODEGEN_CACHE": str(tmp_path / "cache"),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "release", "--root", str(pending), "release"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen = stderr_until(proc, lambda lines: lines[-1].startswith(at))
    assert seen and seen[-1].startswith(at), "".join(seen)
    proc.send_signal(signal.SIGTERM)
    sent = time.monotonic()
    try:
        _, err = proc.communicate(timeout=EXIT_BOUND)
    finally:
        proc.kill()
    assert time.monotonic() - sent < EXIT_BOUND
    err = "".join(seen) + err
    assert proc.returncode == 143, err
    assert [line for line in err.splitlines() if "interrupted" in line] == ["release: interrupted: nothing was written"]
    assert "Traceback" not in err and "do not match the pin" not in err, err
    assert tree_digest(pending) == before
