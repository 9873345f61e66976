"""The control surface under `/_local/`: local-only state and faults for tests.

Never part of the public spec: these routes are left out of the served
OpenAPI, need no API key, and use their own small models (unknown fields are
rejected, so a typo in a test fails loudly).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException
from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request

from e2b_local_api.http.faults import Fault, FaultKind, FaultQueue
from e2b_local_api.http.operations import OPERATION_IDS
from e2b_local_api.http.stats import RequestStats
from e2b_local_api.state.snapshots import SnapshotRecord
from e2b_local_api.state.store import SandboxRecord, SandboxStore

PREFIX = "/_local"

router = APIRouter(prefix=PREFIX, include_in_schema=False)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SettingsPatch(_Strict):
    pause_seconds: float | None = Field(default=None, ge=0)
    legacy_pause_204: bool | None = None
    node_busy: bool | None = None


class SandboxFlagsPatch(_Strict):
    agent_unresponsive: bool | None = None
    node_busy: bool | None = None
    unpinnable: bool | None = None


class FaultRequest(_Strict):
    kind: FaultKind
    count: int = Field(default=1, ge=1)
    operation: str | None = None
    delay: float = Field(default=0.05, ge=0)
    chunk_size: int = Field(default=1, ge=1)
    after_bytes: int = Field(default=0, ge=0)
    size: int = Field(default=64 * 1024, ge=0)
    retry_after: float | None = Field(default=None, ge=0)


def _store(request: Request) -> SandboxStore:
    store: SandboxStore = request.app.state.store
    return store


def _faults(request: Request) -> FaultQueue:
    faults: FaultQueue = request.app.state.faults
    return faults


def _stats(request: Request) -> RequestStats:
    stats: RequestStats = request.app.state.stats
    return stats


def _settings(store: SandboxStore) -> dict[str, Any]:
    s = store.settings
    return {
        "pause_seconds": s.pause_seconds,
        "legacy_pause_204": s.legacy_pause_204,
        "node_busy": s.node_busy,
    }


def _record(record: SandboxRecord) -> dict[str, Any]:
    config = record.config
    return {
        "sandboxID": record.sandbox_id,
        "templateID": record.template_id,
        "state": record.state.value,
        "pausing": record.pausing is not None,
        "snapshot": record.snapshot.value if record.snapshot else None,
        "boot": record.origin.boot.value,
        "forked_from": record.forked_from,
        "agent_unresponsive": record.agent_unresponsive,
        "node_busy": record.node_busy,
        "unpinnable": record.unpinnable,
        "pauses": record.pauses,
        "forced_pauses": record.forced_pauses,
        "resumes": record.resumes,
        "reboots": record.reboots,
        "forks": record.forks,
        "endAt": record.end_at.isoformat(),
        # What the public API has no field for, so that tests can see it was kept.
        "env_vars": dict(config.env_vars),
        "secure": config.secure,
        "auto_pause_memory": config.lifecycle.pause_memory,
        "iam_tokens": {
            name: {"audience": t.audience, "tokenType": t.token_type} for name, t in config.iam_tokens.items()
        },
        "egress_proxy_password_set": bool(
            config.network and config.network.egress_proxy and config.network.egress_proxy.password
        ),
    }


def _snapshot(snapshot: SnapshotRecord) -> dict[str, Any]:
    return {
        "snapshotID": snapshot.snapshot_id,
        "templateID": snapshot.template_id,
        "name": snapshot.name,
        "builds": [
            {"buildID": b.build_id, "sandboxID": b.sandbox_id, "memory": b.memory, "takenAt": b.taken_at.isoformat()}
            for b in snapshot.builds
        ],
    }


@router.get("/health")
async def health() -> dict[str, bool]:
    return {"ok": True}


@router.get("/settings")
async def get_settings(request: Request) -> dict[str, Any]:
    return _settings(_store(request))


@router.patch("/settings")
async def patch_settings(request: Request, patch: SettingsPatch) -> dict[str, Any]:
    store = _store(request)
    for name, value in patch.model_dump(exclude_none=True).items():
        setattr(store.settings, name, value)
    return _settings(store)


@router.get("/sandboxes")
async def list_records(request: Request) -> list[dict[str, Any]]:
    return [_record(r) for r in await _store(request).all_records()]


@router.get("/sandboxes/{sandbox_id}")
async def get_record(request: Request, sandbox_id: str) -> dict[str, Any]:
    return _record(await _store(request).get(sandbox_id))


@router.get("/snapshots")
async def list_snapshot_records(request: Request) -> list[dict[str, Any]]:
    return [_snapshot(s) for s in await _store(request).all_snapshots()]


@router.patch("/sandboxes/{sandbox_id}")
async def patch_record(request: Request, sandbox_id: str, patch: SandboxFlagsPatch) -> dict[str, Any]:
    record = await _store(request).get(sandbox_id)
    # Plain attribute writes with no await between: atomic under asyncio.
    for name, value in patch.model_dump(exclude_none=True).items():
        setattr(record, name, value)
    return _record(record)


@router.get("/faults")
async def list_faults(request: Request) -> list[dict[str, object]]:
    return [f.describe() for f in _faults(request).pending()]


@router.post("/faults", status_code=201)
async def arm_fault(request: Request, body: FaultRequest) -> dict[str, object]:
    if body.operation is not None and body.operation not in OPERATION_IDS:
        raise HTTPException(422, f"unknown operation {body.operation!r}")
    fields = body.model_dump(exclude={"count"})
    fault = Fault(remaining=body.count, **fields)
    _faults(request).arm(fault)
    return fault.describe()


@router.delete("/faults", status_code=204)
async def clear_faults(request: Request) -> None:
    _faults(request).clear()


@router.get("/stats")
async def get_stats(request: Request) -> dict[str, object]:
    return _stats(request).snapshot()


@router.delete("/stats", status_code=204)
async def reset_stats(request: Request) -> None:
    _stats(request).reset()


@router.post("/reset", status_code=204)
async def reset(request: Request) -> None:
    """Back to a fresh server: no sandboxes, snapshots or idempotency keys, default settings, no faults, zero counts."""
    await _store(request).reset()
    _faults(request).clear()
    _stats(request).reset()
