"""The local API server (`e2b-local-api`) as a real process for the CLI's end-to-end tests.

One server per test module on a free 127.0.0.1 port; its `/_local/` control
surface resets it between tests. Modules skip, with the reason, when the
`e2b-local-api` or `e2b` console script is not installed.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

DEV_KEY = "e2b_local_dev_key"
BIN = Path(sys.executable).parent


def _script(name: str) -> str | None:
    candidate = BIN / name
    return str(candidate) if candidate.exists() else shutil.which(name)


SERVER = _script("e2b-local-api")
E2B = _script("e2b")
NEEDS_SCRIPTS = [
    pytest.mark.skipif(SERVER is None, reason="the e2b-local-api console script is not installed"),
    pytest.mark.skipif(E2B is None, reason="the e2b console script is not installed (pip install -e packages/cli)"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def serving() -> Iterator[tuple[str, httpx.Client]]:
    """The server's URL and a client for its control surface, until the block ends."""
    with server_process() as (url, control, _proc):
        yield url, control


@contextmanager
def server_process() -> Iterator[tuple[str, httpx.Client, subprocess.Popen[str]]]:
    """`serving()`, and the server's process (a test may stop it: SIGSTOP, SIGCONT)."""
    assert SERVER is not None
    port = free_port()
    proc = subprocess.Popen(
        [SERVER, "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    control = httpx.Client(base_url=url, timeout=10, headers={"Content-Type": "application/json"})
    try:
        # Polls the health route: the server binds its port after the process starts.
        deadline = time.monotonic() + 30
        while True:
            try:
                if control.get("/_local/health").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.skip(f"the local API server did not start: {proc.stderr.read() if proc.stderr else ''}")
            time.sleep(0.1)
        yield url, control, proc
    finally:
        control.close()
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
