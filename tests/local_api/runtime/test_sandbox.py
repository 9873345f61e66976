"""One sandbox's process tree (runtime/sandbox.py): the per-sandbox process limit under concurrent spawns.

The spawns are made in one event loop tick: each is past its checks and waiting
for the agent's answer before any answer is read, the case where every one of
them used to pass the limit.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from e2b_local_api.runtime import isolation, sandbox
from e2b_local_api.runtime.isolation import host_id, resolv_conf
from e2b_local_api.runtime.layout import Layout
from e2b_local_api.runtime.processes import ManagedProcess
from e2b_local_api.runtime.sandbox import SandboxError, SandboxRuntime, Spawn

LIMIT = 3
DEADLINE = 10.0  # bounds a failure only


@pytest.fixture
def layout() -> Iterator[Layout]:
    """A sandbox folder under the system's temporary folder, which the sandbox's root can traverse (pytest's not)."""
    folder = Path(tempfile.mkdtemp(prefix="e2b-sandbox-test-"))
    folder.chmod(0o711)
    yield Layout(folder / "sandbox")
    shutil.rmtree(folder, ignore_errors=True)


def waiting_cat() -> Spawn:
    """A process that stays until its stdin closes: it holds its slot for the whole test."""
    return Spawn("/bin/cat", (), {}, None, "user", True, None, None, None)


def test_concurrent_spawns_past_the_limit_are_refused(layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    found = isolation.probe()
    if not found.available:
        pytest.skip(f"sandboxes cannot run processes on this machine: {found.reason}")
    monkeypatch.setattr(sandbox, "MAX_PROCESSES", LIMIT)
    layout.create(resolv_conf=resolv_conf(found, False), host_id=lambda inside: host_id(found.mode, inside))

    async def run() -> tuple[list[ManagedProcess | BaseException], int]:
        runtime = SandboxRuntime("limit", layout=layout, isolation=found, env_vars={}, network=False)
        try:
            await runtime.start()
            failed = Spawn("/no/such/command", (), {}, None, "user", False, None, None, None)
            with pytest.raises(SandboxError) as refused:
                await asyncio.wait_for(runtime.spawn(failed), DEADLINE)
            assert refused.value.kind == "invalid_argument"  # and its slot is given back
            burst = [runtime.spawn(waiting_cat()) for _ in range(LIMIT + 2)]
            first = await asyncio.wait_for(asyncio.gather(*burst, return_exceptions=True), DEADLINE)
            # With one process gone, one more may start.
            started = [p for p in first if isinstance(p, ManagedProcess)]
            started[0].close_stdin()
            await asyncio.wait_for(started[0].done.wait(), DEADLINE)
            await asyncio.wait_for(runtime.spawn(waiting_cat()), DEADLINE)
            return first, len(runtime.processes)
        finally:
            runtime.kill()
            await runtime.wait_ended()

    first, running = asyncio.run(run())
    assert sum(isinstance(p, ManagedProcess) for p in first) == LIMIT
    refusals = [p for p in first if not isinstance(p, ManagedProcess)]
    assert [(type(r), getattr(r, "kind", None)) for r in refusals] == [(SandboxError, "resource_exhausted")] * 2
    assert running == LIMIT
