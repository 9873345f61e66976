"""A terminal on a sandbox, as `e2b sandbox create` and `connect` open it.

Its options (-d, -u, -c, -e), the sandbox kept alive while it is open, and
what `create` does with the sandbox once it is closed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, TypeVar

import click

from e2b_cli import output
from e2b_cli.params import metadata_pairs, non_empty

if TYPE_CHECKING:
    from e2b import Sandbox

__all__ = [
    "KEEP_ALIVE_EVERY",
    "TERMINAL_ONLY_TIMEOUT",
    "after_terminal",
    "attach",
    "keep_alive",
    "terminal_options",
    "then_after_terminal",
]

F = TypeVar("F", bound=Callable[..., object])

# While a terminal is open, the sandbox's deadline is pushed back this often (at most; shorter timeouts, sooner).
KEEP_ALIVE_EVERY = 60.0
# `create` without --timeout: the sandbox lives while its terminal is open, this long past each refresh.
TERMINAL_ONLY_TIMEOUT = 30


def terminal_options(f: F) -> F:
    """-d, -u, -c and -e: whether to open a terminal on the sandbox, and as whom, where, with what environment."""
    options = [
        click.option(
            "-d",
            "--detach",
            is_flag=True,
            help="Do not open a terminal on the sandbox (implied when stdin or stdout is not a terminal).",
        ),
        click.option("-u", "--user", metavar="USER", callback=non_empty, help="Run the terminal's shell as USER."),
        click.option("-c", "--cwd", metavar="DIR", callback=non_empty, help="Start the terminal's shell in DIR."),
        click.option(
            "-e",
            "--env",
            "envs",
            metavar="KEY=VALUE",
            multiple=True,
            callback=metadata_pairs,
            help="Set an environment variable for the terminal's shell; repeat for several.",
        ),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def keep_alive(sbx: Sandbox, timeout: int, stop: threading.Event) -> None:
    """Push the sandbox's deadline `timeout` seconds ahead until `stop`, so that an open terminal is not cut."""
    every = max(1.0, min(KEEP_ALIVE_EVERY, timeout / 3))
    while not stop.wait(every):
        try:
            sbx.connect(timeout)  # keeps a later deadline, unlike set_timeout
        except Exception:  # a missed refresh is retried; the terminal itself reports a lost sandbox
            pass


def attach(sbx: Sandbox, *, timeout: int, user: str | None, cwd: str | None, envs: Mapping[str, str]) -> None:
    """An interactive terminal on `sbx` until its shell exits; the sandbox is kept alive meanwhile."""
    from e2b_cli.pty_session import open_terminal

    output.say(f"Terminal connecting to sandbox {sbx.sandbox_id}; exit or Ctrl-D ends it.")
    stop = threading.Event()
    refresher = threading.Thread(target=keep_alive, args=(sbx, timeout, stop), name="e2b-keep-alive", daemon=True)
    refresher.start()
    try:
        open_terminal(sbx, user=user, cwd=cwd, envs=envs)
    finally:
        stop.set()
        click.echo()  # the remote prompt may have left the cursor mid-line
    output.say(f"Closed the terminal on sandbox {sbx.sandbox_id}.")


def _paused(sbx: Sandbox) -> bool:
    """Whether the API reports `sbx` paused; False when it cannot tell (then the sandbox is treated as before)."""
    try:
        return str(sbx.get_info().state) == "paused"
    except Exception:
        return False


def after_terminal(sbx: Sandbox, timeout: int | None) -> None:
    """What `create` does once its terminal is closed: keep the sandbox `timeout` seconds, or kill it.

    A sandbox paused meanwhile (`e2b sandbox pause` from another shell) is left as it is: its
    snapshot is someone's choice to keep, which a kill would discard (and a new timeout resume).
    """
    if _paused(sbx):
        sandbox_id = sbx.sandbox_id
        output.say(
            f"Sandbox {sandbox_id} was paused meanwhile: left paused; `e2b sandbox connect {sandbox_id}` resumes it."
        )
        return
    try:
        if timeout is not None:
            sbx.set_timeout(timeout)
            output.say(f"Sandbox {sbx.sandbox_id} keeps running for {timeout} seconds.")
        elif sbx.kill():
            output.say(f"Killed sandbox {sbx.sandbox_id} (--timeout or -d keeps a sandbox).")
    except Exception as error:  # the session's own failure, if any, is the one to report
        what = "set its timeout" if timeout is not None else "kill it"
        output.say(f"Could not {what} ({error}); run `e2b sandbox kill {sbx.sandbox_id}` when done.", "yellow")


@contextmanager
def then_after_terminal(sbx: Sandbox, timeout: int | None) -> Iterator[None]:
    """`after_terminal` once the block ends, however it ends: a return, an exception, or a signal.

    A signal (SIGTERM, SIGHUP: a closed window, `tmux kill-session`) ends the
    process without unwinding the command's thread, so the block's `finally`
    would never kill the sandbox; the launcher's hook does it instead, bounded
    in time (`on_fatal_signal`) so that a server that does not answer cannot
    hold the exit. The lock makes it happen once: a signal that lands while the
    `finally` is at it waits for that instead of asking again.
    """
    from e2b_cli.pty_session import SandboxSilent  # loaded by a command that opens a terminal only
    from e2b_cli.terminal import on_fatal_signal

    lock = threading.Lock()
    done = [False]

    def end() -> None:
        with lock:
            if not done[0]:
                done[0] = True
                after_terminal(sbx, timeout)

    with on_fatal_signal(end):
        try:
            yield
        except SandboxSilent:
            # Asking a sandbox that does not answer would hold the error for another timeout or two.
            with lock:
                done[0] = True
            sandbox_id = sbx.sandbox_id
            output.say(
                f"Sandbox {sandbox_id} was left as it is, until its timeout; `e2b sandbox kill {sandbox_id}` ends it.",
                "yellow",
            )
            raise
        finally:
            end()
