"""`e2b_cli.output`: colour only on a terminal and never with NO_COLOR; no wrapping in pipes."""

from __future__ import annotations

import datetime
import io

import httpx
import pytest
from e2b import SandboxInfo
from e2b_cli import output

from tests.cli.conftest import SANDBOX_ID, Invoke, MockApi, error, sandbox_json

ESC = "\x1b["
PAUSE = f"/sandboxes/{SANDBOX_ID}/pause"


class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _info() -> SandboxInfo:
    when = datetime.datetime(2025, 1, 2, 3, 4, 5)  # naive: taken as UTC
    return SandboxInfo(SANDBOX_ID, "base", "paused", when, when, 2, 512)


@pytest.fixture
def scripted(api: MockApi) -> MockApi:
    api.on("GET", "/v2/sandboxes", httpx.Response(200, json=[sandbox_json(), sandbox_json("b", state="paused")]))
    api.on("GET", f"/sandboxes/{SANDBOX_ID}", httpx.Response(200, json=sandbox_json()))
    api.on("POST", PAUSE, httpx.Response(200, json={"forced": True}))
    api.on("POST", "/sandboxes/nope/pause", error(404, "sandbox 'nope' not found"))
    return api


CASES = [
    ["sandbox", "list"],
    ["sandbox", "info", SANDBOX_ID],
    ["sandbox", "pause", SANDBOX_ID, "--force"],
    ["sandbox", "pause", "nope"],
]


@pytest.mark.parametrize("args", CASES)
def test_no_escapes_off_a_terminal(scripted: MockApi, run: Invoke, args: list[str]) -> None:
    result = run(*args)
    assert ESC not in result.stdout
    assert ESC not in result.stderr


@pytest.mark.parametrize("args", CASES)
def test_no_color_wins_over_a_forced_terminal(scripted: MockApi, run: Invoke, args: list[str]) -> None:
    result = run(*args, env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert ESC not in result.stdout
    assert ESC not in result.stderr


def test_colour_on_a_terminal(scripted: MockApi, run: Invoke) -> None:
    # FORCE_COLOR makes rich treat CliRunner's stream as a terminal: the control for the tests above.
    result = run("sandbox", "pause", "nope", env={"FORCE_COLOR": "1"})
    assert ESC in result.stderr


def test_console_detects_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    tty = FakeTty()
    output.console(file=tty).print("x", style="red")
    assert ESC in tty.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    tty = FakeTty()
    output.console(file=tty).print("x", style="bold red")
    assert tty.getvalue() == "x\n"


def test_pipe_output_is_not_wrapped() -> None:
    pipe = io.StringIO()
    output.print_error("word " * 100, "hint " * 100, verbatim=False, file=pipe)
    assert len(pipe.getvalue().splitlines()) == 2


def test_info_dict_is_json_ready() -> None:
    data = output.info_dict(_info())
    assert data["started_at"] == "2025-01-02T03:04:05+00:00"
    assert data["metadata"] == {}
    assert data["state"] == "paused"


class ClosedPipe(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError


def test_a_closed_pipe_is_left_to_the_top_level_handler() -> None:
    # rich would exit with status 1 itself; the CLI's handler turns this into a quiet 141.
    with pytest.raises(BrokenPipeError):
        output.console(file=ClosedPipe()).print("row")
