"""`sbx.pty` (async flavour): a real bash on a real pseudo-terminal behind a real Connect envd."""

from __future__ import annotations

import asyncio

import anyio
import pytest
from e2b import AsyncSandbox, InvalidArgumentException, PtySize

from ._envd_server import EnvdServer

pytestmark = pytest.mark.anyio


async def _until(output: bytearray, text: bytes) -> None:
    with anyio.fail_after(30):
        while text not in output:
            await asyncio.sleep(0.01)


async def test_a_terminal_runs_keys_resizes_and_exits(sbx: AsyncSandbox, envd: EnvdServer) -> None:
    output = bytearray()
    terminal = await sbx.pty.create(PtySize(rows=24, cols=80), on_data=output.extend, envs={"PS1": "$ "})
    assert envd.faults.headers["Start"]["keepalive-ping-interval"] == "50"
    await sbx.pty.send_stdin(terminal.pid, b"stty size; echo $TERM\n")
    await _until(output, b"24 80")
    await _until(output, b"xterm-256color")
    await sbx.pty.resize(terminal.pid, PtySize(rows=30, cols=100))
    await sbx.pty.send_stdin(terminal.pid, b"stty size\n")
    await _until(output, b"30 100")
    await sbx.pty.send_stdin(terminal.pid, b"exit 0\n")
    with anyio.fail_after(30):
        result = await terminal.wait()
    assert result.exit_code == 0
    assert result.stdout == ""  # a terminal's output is bytes, to on_data only


async def test_a_terminal_can_be_reconnected_and_killed(sbx: AsyncSandbox) -> None:
    terminal = await sbx.pty.create(PtySize(24, 80), on_data=lambda _: None)
    await terminal.disconnect()
    output = bytearray()
    again = await sbx.pty.connect(terminal.pid, on_data=output.extend)
    await sbx.pty.send_stdin(terminal.pid, b"echo back-$((6*7))\n")
    await _until(output, b"back-42")
    assert await sbx.pty.kill(terminal.pid) is True
    with anyio.fail_after(30), pytest.raises(Exception, match="exited with code -1"):
        await again.wait()
    assert await sbx.pty.kill(terminal.pid) is False


@pytest.mark.parametrize(
    ("rows", "cols", "field"), [(0, 80, "rows"), (24, 0, "cols"), (100_000, 80, "rows"), (24, -1, "cols")]
)
async def test_a_size_out_of_range_is_refused_before_any_request(
    sbx: AsyncSandbox, envd: EnvdServer, rows: int, cols: int, field: str
) -> None:
    with pytest.raises(InvalidArgumentException, match=f"size.{field}"):
        await sbx.pty.create(PtySize(rows=rows, cols=cols), on_data=lambda _: None)
    with pytest.raises(InvalidArgumentException, match=f"size.{field}"):
        await sbx.pty.resize(1, PtySize(rows=rows, cols=cols))
    assert envd.faults.starts == 0
    assert "Update" not in envd.faults.calls


async def test_a_size_that_is_not_a_pty_size_is_refused(sbx: AsyncSandbox) -> None:
    with pytest.raises(InvalidArgumentException, match="PtySize"):
        await sbx.pty.create((24, 80), on_data=lambda _: None)  # type: ignore[arg-type]
