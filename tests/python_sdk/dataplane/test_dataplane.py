"""The data plane on `AsyncSandbox` (`e2b.sandbox_async.dataplane`): loaded late, remade when the sandbox changes."""

from __future__ import annotations

import subprocess
import sys

import pytest
from e2b import AsyncSandbox, ConnectionConfig, SandboxNotRunningException

from ._envd_server import EnvdServer
from .conftest import sandbox

ENVD_CLIENT = {"protobuf", "connectrpc", "e2b.envd.process.process_pb", "e2b.sandbox_async.envd_client"}


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint(' '.join(sys.modules))"],
        check=True,
        capture_output=True,
        text=True,
    )
    return set(out.stdout.split())


def test_the_envd_client_loads_on_first_data_plane_use() -> None:
    assert _modules_after("import e2b") & ENVD_CLIENT == set()
    names = "AsyncSandbox, Sandbox, PtySize, CommandExitException, EntryInfo, FilesystemEvent, WriteEntry"
    assert _modules_after(f"from e2b import {names}") & ENVD_CLIENT == set()
    used = _modules_after("from e2b import AsyncSandbox\nAsyncSandbox('abc').commands")
    assert ENVD_CLIENT <= used


def test_the_handles_are_exported_lazily() -> None:
    assert "AsyncCommandHandle" in _modules_after("import e2b\nprint('AsyncCommandHandle', e2b.AsyncCommandHandle)")


def test_the_objects_are_made_again_when_connect_changed_the_sandbox() -> None:
    sbx = AsyncSandbox("abc", envd_version="0.3.0", connection_config=ConnectionConfig(api_key="k"))
    first = sbx.commands
    assert sbx.commands is first and sbx.files is sbx.files
    sbx.envd_version = "0.6.4"  # what connect() does with its answer
    assert sbx.commands is not first


@pytest.mark.anyio
async def test_is_running(envd: EnvdServer) -> None:
    sbx = sandbox(envd)
    assert await sbx.is_running() is True
    envd.faults.health = (502, b'{"message": "sandbox sbxtest was not found"}')
    assert await sbx.is_running() is False
    envd.faults.health = None


@pytest.mark.anyio
async def test_a_files_call_to_a_gone_sandbox(envd: EnvdServer, sleeps: list[float]) -> None:
    sbx = sandbox(envd)
    envd.faults.errors["files"] = (502, "sandbox sbxtest was not found")
    with pytest.raises(SandboxNotRunningException, match="killed, paused"):
        await sbx.files.read("/etc/hostname")
