"""The released `e2b` SDK, unmodified, runs its data plane against the local server (commands, pty, lifecycle).

The virtualenv is the control-plane conformance's (`requirements/e2b-released.txt`,
hashed, built once per run); each group of `released_commands.py` runs in it,
isolated from this repository, against a server whose sandboxes run processes.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from e2b_local_api import DEV_API_KEY

from tests.conformance.test_released_sdk import clean_env, released_python  # noqa: F401 -- the fixture
from tests.local_api.sandboxes import RealServer, real_server

SCRIPT = Path(__file__).with_name("released_commands.py")
GROUPS = ("commands", "pty", "lifecycle", "async_commands")


@pytest.fixture(scope="module")
def server() -> Iterator[RealServer]:
    with real_server() as running:
        yield running


@pytest.mark.parametrize("group", GROUPS)
def test_released_sdk_data_plane(released_python: Path, server: RealServer, tmp_path: Path, group: str) -> None:  # noqa: F811
    command = [str(released_python), "-I", str(SCRIPT), "--url", server.url, "--api-key", DEV_API_KEY, group]
    done = subprocess.run(
        command, capture_output=True, text=True, env=clean_env(), cwd=tmp_path, timeout=180, check=False
    )
    assert done.returncode == 0, f"released SDK, group {group}:\n{done.stderr}{done.stdout}"
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["group"] == group and sum(result["calls"].values()) > 0
