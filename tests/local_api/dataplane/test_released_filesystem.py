"""The released `e2b` 2.63.0, in its own virtualenv (the hashed lock), drives the filesystem apps unmodified.

The same virtualenv the control-plane conformance builds (`build_once`); the
stand-in sandbox is served by uvicorn on a free port; the SDK reaches it with
`sandbox_url`, as `E2B_SANDBOX_URL` does, and names it in `E2b-Sandbox-Id`.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conformance.test_released_sdk import clean_env, released_python  # noqa: F401 -- the fixture

from .conftest import Envd

SCRIPT = Path(__file__).with_name("released_filesystem_calls.py")
TIMEOUT = 180


def run(
    python: Path, envd: Envd, group: str, sandbox_id: str, token: str | None, root: Path, cwd: Path
) -> dict[str, int]:
    command = [str(python), "-I", str(SCRIPT), envd.url, sandbox_id, token or "-", str(root), group]
    done = subprocess.run(
        command, capture_output=True, text=True, env=clean_env(), cwd=cwd, timeout=TIMEOUT, check=False
    )
    assert done.returncode == 0, f"group {group} exited {done.returncode}:\n{done.stderr}{done.stdout}"
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["group"] == group
    calls: dict[str, int] = result["calls"]
    return calls


# What each group calls, and how often (the figures of the point 5 for the filesystem).
EXPECTED = {
    "files": {
        "write": 7, "write_files": 1, "read": 6, "list": 2, "exists": 2, "get_info": 5, "make_dir": 2, "rename": 1,
        "remove": 2, "read_missing": 1, "get_info_missing": 1, "list_missing": 1, "nul_path": 1, "read_a_folder": 1,
        "proc_environ": 1, "read_outside": 2, "watch_dir_sync": 1,
    },
    "async": {"async_calls": 3, "watch_dir_async": 1},
}  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("group", ["files", "async"])
def test_released_sdk_filesystem(released_python: Path, envd: Envd, group: str, tmp_path: Path) -> None:  # noqa: F811
    sandbox = envd.sandboxes.create(f"released-{group}")
    assert run(released_python, envd, group, sandbox.sandbox_id, None, sandbox.root, tmp_path) == EXPECTED[group]


@pytest.mark.slow
def test_released_sdk_signed_urls(released_python: Path, envd: Envd, tmp_path: Path) -> None:  # noqa: F811
    sandbox = envd.sandboxes.create("released-secure", access_token="released-token", secure=True)
    calls = run(released_python, envd, "signed", sandbox.sandbox_id, "released-token", sandbox.root, tmp_path)
    assert calls["download_url"] == 2


@pytest.mark.slow
def test_released_sdk_sees_a_gone_sandbox(released_python: Path, envd: Envd, tmp_path: Path) -> None:  # noqa: F811
    sandbox = envd.sandboxes.create("released-gone")
    sandbox.set_state("gone")
    calls = run(released_python, envd, "gone", sandbox.sandbox_id, None, sandbox.root, tmp_path)
    assert calls == {"is_running_gone": 1, "read_gone": 1}
