"""The server under load: 200 concurrent pauses and resumes of 50 sandboxes.

Driven by the async SDK through its default transport. Afterwards every
sandbox must be in one consistent state (its pause and resume counts agree
with it, the public API and the control surface agree), and the server must
have answered every request exactly once.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from e2b import AsyncSandbox, SandboxPauseRefusedException, SandboxPauseResult

from .conftest import LiveServer

pytestmark = pytest.mark.anyio

SANDBOXES = 50
OPERATIONS = 200


async def test_concurrent_pauses_and_resumes_stay_consistent(live: LiveServer) -> None:
    opts: dict[str, Any] = {"api_url": live.url, "api_key": live.api_key, "request_timeout": 30}
    # Pauses take a little time, so later requests join pauses in flight and
    # resumes wait for them: the interesting interleavings.
    live.settings(pause_seconds=0.02)
    sandboxes = await asyncio.gather(*(AsyncSandbox.create(**opts) for _ in range(SANDBOXES)))
    ids = [s.sandbox_id for s in sandboxes]
    live.control.delete("/_local/stats").raise_for_status()

    rng = random.Random(1234)
    plan = [(ids[i % SANDBOXES], rng.choice(["pause", "force", "resume"])) for i in range(OPERATIONS)]
    rng.shuffle(plan)

    async def run(sandbox_id: str, action: str) -> object:
        if action == "resume":
            return await AsyncSandbox.connect(sandbox_id, **opts)
        try:
            return await AsyncSandbox.pause(sandbox_id, force=action == "force", **opts)
        except SandboxPauseRefusedException as error:  # never expected: no fault is set
            return error

    results = await asyncio.gather(*(run(sid, action) for sid, action in plan))

    # Every call got exactly one answer of the right kind.
    assert len(results) == OPERATIONS
    for (_, action), result in zip(plan, results, strict=True):
        expected = AsyncSandbox if action == "resume" else SandboxPauseResult
        assert isinstance(result, expected), (action, result)

    # The server received each request once and answered each once.
    stats = live.stats()
    wanted = {
        "pauseSandbox": sum(a != "resume" for _, a in plan),
        "connectSandbox": sum(a == "resume" for _, a in plan),
    }
    assert stats["received"] == wanted
    assert stats["answered_total"] == wanted
    assert stats["answered_twice"] == 0
    assert stats["in_flight"] == 0
    assert set(stats["answered"]["pauseSandbox"]) <= {"200", "409"}
    assert set(stats["answered"]["connectSandbox"]) <= {"200", "201"}

    # Each sandbox is in one state, and its history explains it.
    records = {r["sandboxID"]: r for r in live.control.get("/_local/sandboxes").json()}
    assert set(records) == set(ids)
    with live.api() as api:
        listed = {s["sandboxID"]: s["state"] for s in api.get("/v2/sandboxes").json()}
    for sandbox_id, record in records.items():
        assert not record["pausing"]
        balance = record["pauses"] - record["resumes"]
        assert balance == (1 if record["state"] == "paused" else 0), record
        assert listed[sandbox_id] == record["state"]
    # Resumes the server counted are the 201s it sent.
    assert sum(r["resumes"] for r in records.values()) == stats["answered"]["connectSandbox"].get("201", 0)
