"""The released `e2b` SDK (PyPI, `requirements/e2b-released.txt`) against the local API server.

One virtualenv per test run holds the released SDK, installed from the hashed
lock (`build_once`: the first pytest-xdist worker builds it, the others reuse
it). One local API server per module, in a thread of this process on a free
127.0.0.1 port, reset before each test. Each test runs one call group of
`released_calls.py` with the virtualenv's interpreter, in isolated mode
(`-I`), from a temp folder and with an environment stripped of every `E2B_`
(`E2B_DEBUG`, `E2B_API_KEY`, ...), `PYTHON`, `UV_`, `PIP_` and proxy variable
(`NO_PROXY` names 127.0.0.1), so the released SDK sees nothing of this
repository, of this SDK's settings or of the caller's shell: its URL and key
are passed as arguments.

These tests define what the local server must do for the released SDK: none
is skipped or marked xfail for a missing server feature. The only skip is a
virtualenv that cannot be built because the package index is unreachable.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2b_local_api import DEV_API_KEY, create_app
from e2b_local_api.http.http_protocol import server_config

from tests.conformance.released_calls import GROUPS
from tests.local_api.conftest import control_client, free_socket, serving, url_of
from tests.once_per_run import build_once

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "requirements" / "e2b-released.txt"
SCRIPT = Path(__file__).with_name("released_calls.py")
INSTALL_TIMEOUT = 600
GROUP_TIMEOUT = 120
# What uv (and pip) print when the index cannot be reached: only then is a failed install a skip.
OFFLINE = re.compile(
    r"failed to fetch|error sending request|dns error|failed to lookup address|name or service not known"
    r"|temporary failure in name resolution|network is unreachable|connection refused|connection reset"
    r"|tcp connect error|timed out|could not connect|no route to host|max retries exceeded",
    re.IGNORECASE,
)
# The lock's pins exactly: every file checked against its hash, nothing resolved beyond the lock.
HASHED = ("--require-hashes", "--no-deps")
PROXY_VARIABLES = {"http_proxy", "https_proxy", "all_proxy", "no_proxy"}


def clean_env() -> dict[str, str]:
    """This process's environment less what could steer the released SDK or its interpreter."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("E2B_", "PYTHON", "UV_", "PIP_", "VIRTUAL_ENV", "CONDA"))
        and key.lower() not in PROXY_VARIABLES
    }
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    return env


def build_released_venv(folder: Path) -> None:
    """A virtualenv in `folder/venv` with exactly the lock's pins, hash-checked, no dependency resolution."""
    venv = folder / "venv"
    uv = [sys.executable, "-m", "uv"]
    steps = [
        [*uv, "venv", "--quiet", "--python", sys.executable, str(venv)],
        [*uv, "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"), *HASHED, "-r", str(LOCK)],
    ]
    # The caller's index, proxy and cache settings stay (a mirror or a proxy may be how PyPI is reached);
    # only what would pick another interpreter or environment goes.
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "VIRTUAL_ENV", "CONDA"))}
    for step in steps:
        try:
            done = subprocess.run(step, capture_output=True, text=True, env=env, timeout=INSTALL_TIMEOUT, check=False)
        except subprocess.TimeoutExpired as timeout:
            (folder / "offline").write_text(f"{' '.join(step)}: no answer in {timeout.timeout} s")
            return
        if done.returncode != 0:
            output = f"{' '.join(step)} exited {done.returncode}:\n{done.stdout}{done.stderr}"
            if OFFLINE.search(done.stdout + done.stderr):
                (folder / "offline").write_text(output)
                return
            raise RuntimeError(output)


@pytest.fixture(scope="session")
def released_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The interpreter of the run's released-SDK virtualenv (built once per run)."""
    folder = build_once(tmp_path_factory, "e2b-released-venv", build_released_venv)
    offline = folder / "offline"
    if offline.exists():
        pytest.skip(f"the released SDK could not be installed, the package index is unreachable: {offline.read_text()}")
    python = folder / "venv" / "bin" / "python"
    assert python.exists(), f"{python} missing after the build"
    return python


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    sock = free_socket()
    with serving(server_config(create_app(), log_level="critical"), sock):
        yield url_of(sock)


@pytest.fixture
def fresh_server(server_url: str) -> str:
    """The module's server, emptied: each group starts with no sandbox and no snapshot."""
    with control_client(server_url) as control:
        control.post("/_local/reset").raise_for_status()
    return server_url


def run_group(python: Path, url: str, name: str, cwd: Path) -> dict[str, Any]:
    command = [str(python), "-I", str(SCRIPT), "--api-url", url, "--api-key", DEV_API_KEY, name]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, env=clean_env(), cwd=cwd, timeout=GROUP_TIMEOUT, check=False
        )
    except subprocess.TimeoutExpired as timeout:
        pytest.fail(f"{name}: no answer in {GROUP_TIMEOUT} s\n{timeout.stdout!r}\n{timeout.stderr!r}")
    if done.returncode != 0:
        # The exception first (the server's answer, as the released SDK saw it), then the whole traceback.
        last = done.stderr.strip().splitlines()[-1:] or ["(no output on stderr)"]
        output = f"{done.stderr}{done.stdout}"
        pytest.fail(f"released SDK, group {name}, exit {done.returncode}: {last[0]}\n{output}", pytrace=False)
    lines = done.stdout.strip().splitlines()
    assert lines, f"{name} printed nothing"
    result: dict[str, Any] = json.loads(lines[-1])
    assert result["group"] == name
    return result


def test_groups_listed(released_python: Path, tmp_path: Path) -> None:
    """The script, run by the released interpreter, has exactly the groups this module runs."""
    done = subprocess.run(
        [str(released_python), "-I", str(SCRIPT), "--list"],
        capture_output=True,
        text=True,
        env=clean_env(),
        cwd=tmp_path,
        timeout=GROUP_TIMEOUT,
        check=True,
    )
    assert done.stdout.split() == list(GROUPS)


def test_released_sdk_is_the_locked_one(released_python: Path, tmp_path: Path) -> None:
    """The virtualenv runs the pinned release, not this repository's SDK."""
    probe = "import e2b, importlib.metadata as m; print(m.version('e2b'), e2b.__file__)"
    done = subprocess.run(
        [str(released_python), "-I", "-c", probe],
        capture_output=True,
        text=True,
        env=clean_env(),
        cwd=tmp_path,
        timeout=GROUP_TIMEOUT,
        check=True,
    )
    version, location = done.stdout.split()
    pinned = re.search(r"^e2b==(\S+)", LOCK.read_text(), re.MULTILINE)
    assert pinned is not None
    assert version == pinned.group(1)
    assert not Path(location).resolve().is_relative_to(ROOT), location


@pytest.mark.parametrize("name", list(GROUPS))
def test_released_calls(released_python: Path, fresh_server: str, tmp_path: Path, name: str) -> None:
    run_group(released_python, fresh_server, name, tmp_path)
