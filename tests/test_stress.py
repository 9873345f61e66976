"""`tests.stress` (`nox -s stress`): its load is bounded and stopped, its runs inherit SIGINT and SIGHUP ignored."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.stress import BUSY_LOOP, DATAPLANE_ROUND, STRESSED, busy_cores, main, started_in_the_background

ROOT = Path(__file__).resolve().parents[1]


def test_one_busy_loop_per_core_all_stopped_after_the_block() -> None:
    with busy_cores(60) as loops:
        assert len(loops) == (os.cpu_count() or 1)
        assert all(loop.poll() is None for loop in loops)
    assert all(loop.returncode is not None for loop in loops)


def test_a_busy_loop_ends_by_itself_when_its_time_is_up() -> None:
    done = subprocess.run([sys.executable, "-c", BUSY_LOOP, "0"], timeout=60, check=False)
    assert done.returncode == 0


@pytest.mark.usefixtures("default_signals")
def test_the_test_runs_start_with_sigint_and_sighup_ignored_and_this_process_keeps_its_own() -> None:
    child = "import signal; print(int(signal.getsignal(signal.SIGINT)), int(signal.getsignal(signal.SIGHUP)))"
    with started_in_the_background():
        done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=60, check=False)
    assert done.stdout == f"{int(signal.SIG_IGN)} {int(signal.SIG_IGN)}\n"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert signal.getsignal(signal.SIGHUP) == signal.SIG_DFL


def test_no_round_at_all_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    # --rounds 0 alone runs the SIGTERM round; with no SIGTERM runs either there is nothing to do.
    assert main(["--rounds", "0", "--sigterm-runs", "0", "--dataplane-runs", "0"]) == 2
    assert "stress: no round to run" in capsys.readouterr().err


def test_negative_rounds_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--rounds", "-1"]) == 2
    assert capsys.readouterr().err == "stress: --rounds, --sigterm-runs and --dataplane-runs must be at least 0\n"


def test_the_dataplane_round_names_a_test_that_exists() -> None:
    path, _, name = DATAPLANE_ROUND.partition("::")
    assert f"def {name}(" in (ROOT / path).read_text()


def test_every_stressed_test_exists() -> None:
    """A renamed or moved test must not drop out of the stress run unnoticed."""
    for entry in STRESSED:
        path, _, name = entry.partition("::")
        assert (ROOT / path).is_file(), entry
        if name:
            assert f"def {name}(" in (ROOT / path).read_text(), entry
