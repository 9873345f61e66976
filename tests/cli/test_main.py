"""`e2b_cli.main`: the root command, its help, and the single top-level error handler."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx
import pytest
from e2b_cli import __version__
from e2b_cli.errors import ExitStatus
from e2b_cli.main import main

from tests.cli.conftest import SANDBOX_ID, Invoke, MockApi, assert_clean_error

PAUSE = f"/sandboxes/{SANDBOX_ID}/pause"


def test_help_documents_exit_statuses_environment_and_examples(run: Invoke) -> None:
    result = run("--help")
    assert result.exit_code == ExitStatus.OK
    for text in ("Exit status:", "E2B_API_KEY", "E2B_API_URL", "E2B_DOMAIN", "NO_COLOR", "Examples:", "--api-key"):
        assert text in result.stdout
    assert run("sandbox", "--help").exit_code == ExitStatus.OK
    assert "Examples:" in run("sandbox", "--help").stdout


def test_version(run: Invoke) -> None:
    result = run("--version")
    assert result.exit_code == ExitStatus.OK
    assert __version__ in result.stdout


@pytest.mark.parametrize(
    "args", [["nope"], ["sandbox", "nope"], ["--bogus", "sandbox", "list"], ["sandbox", "list", "--state"]]
)
def test_usage_errors_exit_2(run: Invoke, args: list[str]) -> None:
    result = run(*args)
    assert result.exit_code == ExitStatus.USAGE
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_no_command_shows_help(run: Invoke) -> None:
    result = run()
    # A usage error, as click (pinned, >= 8.2) makes it: the help on stderr, exit 2.
    assert result.exit_code == ExitStatus.USAGE
    assert result.stdout == ""
    assert result.stderr.startswith("Usage: ")


def test_unexpected_error_is_two_lines(api: MockApi, run: Invoke) -> None:
    api.on("POST", PAUSE, RuntimeError("boom"))
    result = run("sandbox", "pause", SANDBOX_ID)
    assert_clean_error(result, ExitStatus.FAILED, lines=(2,))
    assert "--debug" in result.stderr


@pytest.mark.parametrize("where", ["before", "after"])
def test_debug_shows_the_traceback(api: MockApi, run: Invoke, where: str) -> None:
    api.on("POST", PAUSE, httpx.ConnectError("refused"))
    args = ["sandbox", "pause", SANDBOX_ID]
    result = run(*(["--debug", *args] if where == "before" else [*args, "--debug"]))
    # The traceback, then the same message and exit status as without --debug.
    assert result.exit_code == ExitStatus.NO_ANSWER
    assert "Traceback" in result.stderr and "httpx.ConnectError: refused" in result.stderr
    assert "Error: could not reach the API" in result.stderr


def test_console_script_entry_point() -> None:
    # `python -m e2b_cli` runs main(): the exit status reaches the shell.
    proc = subprocess.run(
        [sys.executable, "-m", "e2b_cli", "sandbox", "pause"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == ExitStatus.USAGE
    assert "Missing argument" in proc.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["sandbox", "list", "--json", "--limit", "0"], "--limit"),
        (["sandbox", "info", "--json"], "Missing argument"),
        (["sandbox", "list", "--json", "--bogus"], "--bogus"),
    ],
)
def test_usage_errors_with_json_are_json(args: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == ExitStatus.USAGE
    out, err = capsys.readouterr()
    assert err == ""
    error = json.loads(out)["error"]
    assert (error["status"], error["error_code"]) == (None, None) and needle in error["message"]


def test_usage_errors_without_json_keep_click_s_form(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sandbox", "list", "--limit", "0", "--", "--json"]) == ExitStatus.USAGE
    out, err = capsys.readouterr()
    assert out == "" and "Usage: e2b sandbox list" in err


HEAVY = "httpx, rich, pyqwest, attrs, the generated client, the sandbox classes or the CLI's terminal and exec modules"
HELP_ARGS = [["--version"], ["--help"], ["sandbox", "--help"], ["sandbox", "pause", "--help"]]
HELP_ARGS += [["sandbox", "exec", "--help"], ["sandbox", "connect", "--help"]]


@pytest.mark.parametrize("args", HELP_ARGS)
def test_help_and_version_leave_the_http_stack_and_rich_unloaded(args: list[str]) -> None:
    code = (
        "import sys\n"
        "from e2b_cli.main import main\n"
        f"status = main({args!r})\n"
        "loaded = sorted({m for m in sys.modules if m.split('.')[0] in ('httpx', 'rich', 'pyqwest', 'attr')}\n"
        "    | {m for m in sys.modules if m.startswith(('e2b.api.client', 'e2b.sandbox_'))}\n"
        "    | {m for m in sys.modules if m in ('e2b_cli.terminal', 'e2b_cli.exec_command', 'e2b_cli.pty_session')})\n"
        "print('LOADED', status, ' '.join(loaded), file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    last = proc.stderr.splitlines()[-1]
    assert last.startswith("LOADED 0"), proc.stderr
    assert last.split()[2:] == [], f"{args} loaded {last.split()[2:]}; none of {HEAVY} may be"
