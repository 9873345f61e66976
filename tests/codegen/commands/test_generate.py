"""`generate`: what `--no-cache` and a changed validator do, and how a signal ends a run however its threads stand."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from codegen.cli import RUN_LOCK
from codegen.openapi import document
from tests.child_output import stderr_until
from tests.codegen.conftest import ROOT, Result, codegen_command, subprocess_env, tree_digest, unchanged
from tests.signal_dispositions import default_dispositions
from toolkit.errors import Problem

MODEL = "packages/python-sdk/e2b/api/client/models/new_sandbox.py"


def validate_line(result: Result) -> str:
    (line,) = [x for x in result.err.splitlines() if x.startswith("codegen: validate ")]
    return line


@pytest.fixture
def generated(project: Path, run: Callable[..., Result]) -> Path:
    """The project after a generation on this machine: its spec's verdict and its output are recorded."""
    result = run(project, "generate")
    assert result.code == 0, result.text
    return project


def test_no_cache_validates_the_spec_afresh(generated: Path, run: Callable[..., Result]) -> None:
    result = run(generated, "generate", "--no-cache")
    assert result.code == 0, result.text
    assert "alongside contract to format" in validate_line(result)


def test_a_validator_that_refuses_the_spec_now_stops_the_run(
    generated: Path, run: Callable[..., Result], cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for verdict in (cache / "validations").glob("*.json"):
        verdict.unlink()
    monkeypatch.setattr(document, "validation_problems", lambda spec: [Problem("refused by the new validator")])
    (generated / MODEL).write_text("edited\n")
    with unchanged(generated):
        refused = run(generated, "generate")
    assert refused.code == 2, refused.text
    assert "codegen: error: refused by the new validator" in refused.err
    monkeypatch.undo()
    passed = run(generated, "generate")
    assert passed.code == 0, passed.text
    assert "alongside contract to format" in validate_line(passed)


# --- signals: an interrupted run ends at once, however its threads stand --------------------------

# `python -m codegen`, with hooks that hold its threads where the test wants them: the validator never
# finishes (as when it waits on the import lock an interrupted import left held), and the main thread,
# inside the validated block, waits in a `__set_name__` (as a dataclass field runs mid-import), which
# Python 3.11 turns a signal's exception into a RuntimeError of its own.  Each says where it is first.
HOOKED = """\
import os, runpy, sys, threading, time

import codegen.openapi.document as document
import codegen.pipeline as pipeline


def say(line):
    # One write: the two threads say where they are at about the same moment, and print's two
    # writes (the text, then the newline) would interleave into lines that match neither.
    os.write(2, f"hook: {line}\\n".encode())


def stuck_validator(spec):
    say("the validator thread is running")
    threading.Event().wait()
    return []


class Waits:
    def __set_name__(self, owner, name):
        say("the main thread is in __set_name__")
        while True:
            time.sleep(0.01)


def check_requirements(*args, **kwargs):
    class Model:
        field = Waits()

    return checked(*args, **kwargs)


document.validation_problems = stuck_validator
checked, pipeline.check_requirements = pipeline.check_requirements, check_requirements
sys.argv = ["codegen", *sys.argv[1:]]
runpy.run_module("codegen", run_name="__main__", alter_sys=True)
"""
WHERE = {"hook: the validator thread is running\n", "hook: the main thread is in __set_name__\n"}
EXIT_BOUND = 30.0  # seconds from the signal to the exit: generous, for a busy machine (it takes a fraction of one)


def test_sigterm_while_the_validator_is_stuck_and_the_main_thread_mid_import_exits_143(
    project: Path, env: dict[str, str | None], run: Callable[..., Result]
) -> None:
    """The deadlock of issue 31: the main thread waited for the validator, the validator for the import lock."""
    before = tree_digest(project)
    with default_dispositions():  # SIGTERM at its default in the child, however the suite was started
        proc = subprocess.Popen(
            [sys.executable, "-c", HOOKED, *codegen_command(project, "generate", "--no-cache", tools="real")[3:]],
            cwd=ROOT,
            env=subprocess_env(env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    seen = stderr_until(proc, lambda lines: WHERE <= set(lines))  # both threads where the hooks hold them
    assert WHERE <= set(seen), "".join(seen)
    proc.send_signal(signal.SIGTERM)
    sent = time.monotonic()
    try:
        _, err = proc.communicate(timeout=EXIT_BOUND)
    finally:
        proc.kill()
    took = time.monotonic() - sent
    assert proc.returncode == 143, "".join(seen) + err
    assert "codegen: interrupted: nothing was written" in err and "Traceback" not in err, err
    assert took < EXIT_BOUND
    assert tree_digest(project) == before
    assert (project / RUN_LOCK).read_bytes() == b""  # released: an idle lock is empty
    after = run(project, "generate")  # and the next run in this tree does not wait for it
    assert after.code == 0 and "waiting for" not in after.err, after.text


# The stress round of `nox -s stress` (tests/stress.py sets the count): `generate` in a subprocess, SIGTERM
# at a random moment; every run ends by itself with 0 (done first) or 143, within STRESS_BOUND of the
# signal, the tree intact and its lock free.  Not in the normal suite: a hundred generations take minutes.
STRESS_RUNS = int(os.environ.get("E2B_STRESS_SIGTERM_RUNS") or 0)
GENERATE_SECONDS = 4.0  # about how long one takes on a busy machine: the signal lands anywhere in it
STRESS_BOUND = 5.0  # seconds: a fraction of one even beside the busy loops (at most 0.85 s in 100 runs)


@pytest.mark.skipif(not STRESS_RUNS, reason="a round of `nox -s stress` (E2B_STRESS_SIGTERM_RUNS)")
@pytest.mark.parametrize("number", range(max(STRESS_RUNS, 1)))
def test_sigterm_at_a_random_moment_of_generate(
    number: int, project: Path, env: dict[str, str | None], run: Callable[..., Result]
) -> None:
    before = tree_digest(project)
    args = ["generate", "--no-cache"] if number % 3 else ["generate"]  # a third each: cold, --no-cache, warm
    if number % 3 == 2:
        assert run(project, "generate").code == 0  # a warm run: the validator's verdict taken from before
        before = tree_digest(project)
    with default_dispositions():
        proc = subprocess.Popen(
            codegen_command(project, *args, tools="real"),  # the signal lands anywhere, the generators' time too
            cwd=ROOT,
            env=subprocess_env(env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    assert proc.stderr is not None
    first = proc.stderr.readline()  # printed once codegen's handler is in place
    time.sleep(random.Random(number).uniform(0, GENERATE_SECONDS))  # the point of the round: anywhere
    proc.send_signal(signal.SIGTERM)
    sent = time.monotonic()
    try:
        _, err = proc.communicate(timeout=EXIT_BOUND)
    finally:
        proc.kill()
    took = time.monotonic() - sent
    err = first + err
    assert proc.returncode in (0, 143), err
    # A finalizer of what the signal left half-used (GitPython's cat-file stream, mid-read) is quiet, and
    # a signal that landed in one is delivered again (codegen.cli._unraisable): no traceback of any kind.
    assert "Traceback (most recent call last)" not in err and "Exception ignored" not in err, err
    if proc.returncode == 143:
        assert "codegen: interrupted: " in err, err
    assert took < STRESS_BOUND, f"{took:.1f} s after SIGTERM"
    assert tree_digest(project) == before
    assert (project / RUN_LOCK).read_bytes() == b""
