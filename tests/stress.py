"""`nox -s stress`: the signal- and timing-sensitive tests, started as a background job, on a machine with no idle core.

A test that passes on a quiet machine from a terminal may still race a timer
or rely on an inherited signal disposition. This runs the tests most exposed
to either (STRESSED) the way `nox -s tests` runs them (pytest-xdist, one
worker per core), but:

- with SIGINT ignored, as a shell hands it to `nox -s tests &` in a script, and SIGHUP
  ignored, as `nohup` hands it down;
- beside one busy loop per core, so that every worker competes for its core;
  each loop ends by itself after `--load-seconds` or when this process is
  gone, and all are stopped at the end;
- `--rounds N` times (default 3);
- then one more round, beside the same busy loops: `generate` run `--sigterm-runs`
  times (default 100) in a subprocess and sent SIGTERM at a random moment
  (SIGTERM_ROUND); each run must end by itself, 0 or 143, within a bound, its
  tree intact and its lock free.  Not with an explicit selection of tests;
- then a data-plane round (DATAPLANE_ROUND), `--dataplane-runs` times (default 10): sandboxes
  killed, paused and resumed, and the server sent SIGTERM, at random moments while their
  commands stream; every call must end within a bound and no sandbox process outlive the
  server.  Not with an explicit selection of tests either.

The exit status is 1 if any round failed.

`python -m tests.stress [--rounds N] [--sigterm-runs N] [--dataplane-runs N] [--load-seconds S] [PYTEST ARGS]`:
test paths or node ids replace the selection; other arguments (`-x`, `-k EXPR`)
reach pytest beside it.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager

from tests.signal_dispositions import dispositions

STRESSED = (
    # signals: sent to the test process itself or to the subprocesses it starts
    "tests/test_signal_dispositions.py",
    "tests/toolkit/test_transaction.py",
    "tests/codegen/test_cli.py",  # also two runs racing for one tree's lock
    "tests/codegen/commands/test_check.py::test_sigint_during_check_leaves_the_tree_unchanged",
    "tests/codegen/test_pipeline.py::test_sigint_during_generation_leaves_the_tree_unchanged",
    "tests/codegen/test_pipeline.py::test_sigterm_during_generation_leaves_the_tree_unchanged",
    "tests/codegen/commands/test_generate.py::test_sigterm_while_the_validator_is_stuck_and_the_main_thread_mid_import_exits_143",
    "tests/cli/test_launcher.py",
    "tests/local_api/test_launcher.py",
    "tests/local_api/runtime/test_server_exit.py",  # SIGKILL and SIGTERM to a server whose sandboxes run
    "tests/local_api/runtime/test_chaos.py",  # random kills and pauses while commands stream
    "tests/python_sdk/test_interruptible.py",  # Ctrl-C during a sync SDK call, in a script and in process
    "tests/codegen/test_journal.py::test_sigterm_right_after_the_write_says_the_tree_holds_the_new_files",
    # timing: read timeouts, deadlines, backoff, slow clients, concurrent requests on real sockets
    "tests/cli/test_sandbox_local_api.py",
    "tests/local_api/http/test_http_protocol.py",
    "tests/local_api/http/test_body_limit.py",
    "tests/local_api/http/test_faults.py",
    "tests/local_api/test_load.py",
    "tests/local_api/runtime/test_lifecycle.py",  # pause freezes, timeouts kill
    "tests/local_api/dataplane/test_process_service.py",  # deadlines, keepalives, slow subscribers
    "tests/local_api/http/test_keep_alive.py",
    "tests/local_api/http/test_lingering_close.py",
    "tests/local_api/test_conformance.py",  # its control client once met a keep-alive reset under load
    "tests/local_api/test_cli.py",
    "tests/python_sdk/test_http.py",
    "tests/python_sdk/test_slow_pause.py",
    "tests/python_sdk/transport/test_factory.py",  # the pool's idle timer against a server's idle close
    "tests/python_sdk/transport/test_real_sockets.py",
    "tests/python_sdk/transport/test_retryable.py",
)

# Random SIGTERM during `generate`: the test runs only when E2B_STRESS_SIGTERM_RUNS says how many times.
SIGTERM_ROUND = "tests/codegen/commands/test_generate.py::test_sigterm_at_a_random_moment_of_generate"
SIGTERM_RUNS_ENV = "E2B_STRESS_SIGTERM_RUNS"

# Random kills, pauses and server SIGTERMs while sandboxes' commands stream: when E2B_STRESS_DATAPLANE_RUNS says.
DATAPLANE_ROUND = "tests/local_api/test_sandbox_chaos.py::test_random_kills_pauses_and_sigterms_while_commands_stream"
DATAPLANE_RUNS_ENV = "E2B_STRESS_DATAPLANE_RUNS"

# One busy loop: it spins until its time is up or its parent (this process) is gone.
BUSY_LOOP = (
    "import os, sys, time\n"
    "end, parent = time.monotonic() + float(sys.argv[1]), os.getppid()\n"
    "while time.monotonic() < end and os.getppid() == parent:\n"
    "    pass\n"
)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="nox -s stress --", description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3, help="how many times to run the tests (default 3; 0: none)")
    p.add_argument(
        "--sigterm-runs",
        type=int,
        default=100,
        help="runs of `generate` sent SIGTERM at a random moment, in a last round (default 100; 0: no such round)",
    )
    p.add_argument(
        "--dataplane-runs",
        type=int,
        default=10,
        help="runs of random sandbox kills, pauses and server SIGTERMs while commands stream (default 10; 0: none)",
    )
    p.add_argument(
        "--load-seconds",
        type=float,
        default=1800,
        help="the busy loops' own bound, should this process be unable to stop them (default 1800)",
    )
    return p


@contextmanager
def busy_cores(seconds: float) -> Iterator[list[subprocess.Popen[bytes]]]:
    """One busy loop per core for the block (at most `seconds`); the processes."""
    loops = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP, str(seconds)]) for _ in range(os.cpu_count() or 1)]
    try:
        yield loops
    finally:
        for loop in loops:
            loop.kill()
        for loop in loops:
            loop.wait()


# What `nohup nox -s tests &` in a script hands down.
IGNORED_IN_THE_BACKGROUND = (signal.SIGINT, signal.SIGHUP)


def started_in_the_background() -> AbstractContextManager[None]:
    """Processes started in the block inherit SIGINT and SIGHUP ignored (an ignored signal stays so across exec)."""
    return dispositions(dict.fromkeys(IGNORED_IN_THE_BACKGROUND, signal.SIG_IGN))


def run_round(pytest_args: Sequence[str], env: dict[str, str] | None = None) -> int:
    command = [sys.executable, "-m", "pytest", "-n", "auto", "--dist", "worksteal", "-q", *pytest_args]
    with started_in_the_background():
        proc = subprocess.Popen(command, env=None if env is None else {**os.environ, **env})
    try:
        return proc.wait()
    finally:
        if proc.poll() is None:  # interrupted here: the test run ignores SIGINT, so end it
            proc.kill()
            proc.wait()


def main(argv: Sequence[str] | None = None) -> int:
    args, pytest_args = parser().parse_known_args(argv)
    if args.rounds < 0 or args.sigterm_runs < 0 or args.dataplane_runs < 0:
        print("stress: --rounds, --sigterm-runs and --dataplane-runs must be at least 0", file=sys.stderr)
        return 2
    selected = any(arg.startswith("tests") for arg in pytest_args)
    options = [arg for arg in pytest_args if not arg.startswith("tests")]
    if not selected:
        pytest_args = [*STRESSED, *pytest_args]
    rounds: list[tuple[str, Sequence[str], dict[str, str] | None]] = [
        (f"round {n}/{args.rounds}", pytest_args, None) for n in range(1, args.rounds + 1)
    ]
    if args.sigterm_runs and not selected:
        runs = {SIGTERM_RUNS_ENV: str(args.sigterm_runs)}
        rounds.append((f"SIGTERM round, {args.sigterm_runs} runs of generate", [SIGTERM_ROUND, *options], runs))
    if args.dataplane_runs and not selected:
        chaos = {DATAPLANE_RUNS_ENV: str(args.dataplane_runs)}
        name = f"data-plane round, {args.dataplane_runs} runs of kills, pauses and SIGTERMs"
        rounds.append((name, [DATAPLANE_ROUND, *options], chaos))
    if not rounds:
        print("stress: no round to run (--rounds 0, and no SIGTERM or data-plane round)", file=sys.stderr)
        return 2
    failed: list[str] = []
    with busy_cores(args.load_seconds) as loops:
        for name, selection, env in rounds:
            print(f"stress: {name}, SIGINT ignored, {len(loops)} busy loop(s)", file=sys.stderr, flush=True)
            start = time.monotonic()
            code = run_round(selection, env)
            took = time.monotonic() - start
            print(f"stress: {name}: exit {code} in {took:.0f} s", file=sys.stderr, flush=True)
            if code != 0:
                failed.append(name)
    if failed:
        print(f"stress: {len(failed)} of {len(rounds)} round(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    print(f"stress: {len(rounds)} round(s) passed", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
