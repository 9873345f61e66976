"""`e2b_local_api.launcher`: the `e2b-local-api` console script as users run it, in a subprocess.

Ctrl-C is sent at points the test knows the process has reached (an import
that announced itself, a server that said it is running), never after a
guessed delay.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from e2b_local_api.launcher import INTERRUPTED

from tests.child_output import stderr_until

SERVER = [sys.executable, "-m", "e2b_local_api"]

# The Ctrl-C sent here must reach the server as a terminal's would, however the suite was started.
pytestmark = pytest.mark.usefixtures("default_signals")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _env(**extra: str) -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if not k.startswith("E2B_")}, **extra}


def test_ctrl_c_while_uvicorn_is_being_imported(tmp_path: Path) -> None:
    # A stand-in for uvicorn that announces its import, then takes its time.
    (tmp_path / "uvicorn.py").write_text(
        "import sys, time\nsys.stderr.write('importing uvicorn\\n')\nsys.stderr.flush()\ntime.sleep(60)\n"
    )
    proc = subprocess.Popen(
        [*SERVER, "--port", str(_free_port())],
        env=_env(PYTHONPATH=os.pathsep.join([str(tmp_path), *sys.path])),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    assert proc.stderr.readline() == "importing uvicorn\n"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=10)  # not the stand-in's 60 s
    assert proc.returncode == INTERRUPTED
    assert (out, err) == ("", "Interrupted.\n")


def test_ctrl_c_while_serving_shuts_down_then_exits_130_without_a_traceback() -> None:
    port = _free_port()
    proc = subprocess.Popen(
        [*SERVER, "--port", str(port)],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    started = stderr_until(proc, lambda lines: f"running on http://127.0.0.1:{port}" in lines[-1])
    if not started or f"running on http://127.0.0.1:{port}" not in started[-1]:
        pytest.fail(f"the server did not start: {''.join(started)}")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == INTERRUPTED, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert "Shutting down" in err  # uvicorn's graceful shutdown ran first
    assert err.endswith("Interrupted.\n") and out == ""


def test_the_package_imports_nothing_heavy_before_the_launcher_runs() -> None:
    code = "import e2b_local_api.launcher, sys; print(' '.join(sorted(sys.modules)))"
    run = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    loaded = set(run.stdout.split())
    assert not loaded & {"uvicorn", "fastapi", "pydantic", "starlette", "e2b_local_api.app", "e2b_local_api.cli"}


def test_the_console_script_is_the_launcher() -> None:
    import tomllib

    pyproject = Path(__file__).parents[2] / "packages" / "local-api" / "pyproject.toml"
    scripts = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts == {"e2b-local-api": "e2b_local_api.launcher:run"}
