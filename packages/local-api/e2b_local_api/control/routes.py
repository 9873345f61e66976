"""The public API: the sandboxes, snapshots and templates operations of spec/openapi.yml.

Handlers read raw requests through `bodies` and `listing`, so a bad request is the spec's 400
`Error`, never FastAPI's 422. Every route is written by hand (`/v2` ones too); unknown query
parameters are ignored, a named one with a bad value is a 400.

How it works, and why: docs/maintainers/packages.md, "packages/local-api/e2b_local_api/control/routes.py".
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import Response

from e2b_local_api.control import bodies, views
from e2b_local_api.control.auth import HEADER as API_KEY_HEADER
from e2b_local_api.control.auth import AuthConfig, require_api_key
from e2b_local_api.http.errors import bad_request
from e2b_local_api.http.validation import INT64_MAX, parse_int, query_value
from e2b_local_api.runtime import lifecycle
from e2b_local_api.state import listing
from e2b_local_api.state.idempotency import key_from, team_of
from e2b_local_api.state.store import SandboxStore
from e2b_local_api.wire import (
    ConnectSandboxRequest,
    CreateSandboxRequest,
    CreateSnapshotRequest,
    ForkSandboxRequest,
    PauseSandboxRequest,
    RefreshSandboxRequest,
    SetSandboxTimeoutRequest,
    UpdateSandboxNetworkRequest,
)
from e2b_local_api.wire.models import (
    Error,
    ListedSandbox,
    Sandbox,
    SandboxDetail,
    SandboxForkResult,
    SandboxMetric,
    SandboxPauseResult,
    SnapshotInfo,
    Template,
)

# Request body models per operation; app.py adds them to the served OpenAPI.
REQUEST_BODIES: dict[str, tuple[type[BaseModel], bool]] = {
    "createSandbox": (CreateSandboxRequest, True),
    "createSandboxV2": (CreateSandboxRequest, True),
    "setSandboxTimeout": (SetSandboxTimeoutRequest, True),
    "connectSandbox": (ConnectSandboxRequest, True),
    "connectSandboxV2": (ConnectSandboxRequest, True),
    "pauseSandbox": (PauseSandboxRequest, False),
    "forkSandbox": (ForkSandboxRequest, False),
    "updateSandboxNetwork": (UpdateSandboxNetworkRequest, True),
    "refreshSandbox": (RefreshSandboxRequest, False),
    "createSnapshot": (CreateSnapshotRequest, True),
}


def _errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    return {status: {"model": Error} for status in statuses}


router = APIRouter()


def _store(request: Request) -> SandboxStore:
    store: SandboxStore = request.app.state.store
    return store


def _authorize(request: Request) -> None:
    config: AuthConfig = request.app.state.auth
    require_api_key(request, config)


async def _body(request: Request) -> tuple[bytes, str | None]:
    return await request.body(), request.headers.get("content-type")


# --- sandboxes -------------------------------------------------------------------------------------------------------


_CREATE_RESPONSES = {201: {"model": Sandbox}, **_errors(400, 401, 404, 409, 500)}


@router.post(
    "/sandboxes", operation_id="createSandbox", tags=["sandboxes"], status_code=201, responses=_CREATE_RESPONSES
)
# The route newer clients (the released SDK) create through: the same operation.
@router.post(
    "/v2/sandboxes", operation_id="createSandboxV2", tags=["sandboxes"], status_code=201, responses=_CREATE_RESPONSES
)
async def create_sandbox(request: Request) -> Response:
    _authorize(request)
    create = bodies.create(*await _body(request))
    key = key_from(request.headers)
    team = team_of(request.headers[API_KEY_HEADER])
    record = await _store(request).create(create, team=team, idempotency_key=key)
    await lifecycle.created(request, record)  # runtime: start its process tree
    return views.json_response(views.sandbox(record), 201, headers=lifecycle.isolation_headers(request))


@router.get(
    "/v2/sandboxes",
    operation_id="listSandboxes",
    tags=["sandboxes"],
    responses={200: {"model": list[ListedSandbox]}, **_errors(400, 401, 500)},
)
async def list_sandboxes(request: Request) -> Response:
    _authorize(request)
    page = await _store(request).page(listing.list_query(request.query_params))
    headers = {}
    if page.next_token:
        headers["X-Next-Token"] = page.next_token
    if page.total_running is not None:
        headers["X-Total-Running"] = str(page.total_running)
    return views.json_response([views.listed(r) for r in page.items], headers=headers)


@router.get(
    "/sandboxes/{sandboxID}",
    operation_id="getSandbox",
    tags=["sandboxes"],
    responses={200: {"model": SandboxDetail}, **_errors(401, 404, 500)},
)
async def get_sandbox(request: Request, sandboxID: str) -> Response:
    _authorize(request)
    record = await _store(request).get(sandboxID)
    return views.json_response(views.detail(record))


@router.delete(
    "/sandboxes/{sandboxID}",
    operation_id="killSandbox",
    tags=["sandboxes"],
    status_code=204,
    responses=_errors(401, 404, 500),
)
async def kill_sandbox(request: Request, sandboxID: str) -> Response:
    _authorize(request)
    await _store(request).kill(sandboxID)
    lifecycle.killed(request, sandboxID)  # runtime: end every process
    return Response(status_code=204)


@router.get(
    "/sandboxes/{sandboxID}/metrics",
    operation_id="getSandboxMetrics",
    tags=["sandboxes"],
    responses={200: {"model": list[SandboxMetric]}, **_errors(400, 401, 404, 500)},
)
async def get_sandbox_metrics(request: Request, sandboxID: str) -> Response:
    _authorize(request)
    start, end = (_unix_seconds(request, name) for name in ("start", "end"))
    if start is not None and end is not None and start > end:
        raise bad_request(f"start: must not be after end, got start={start} end={end}")
    samples = await _store(request).metrics(sandboxID, start=start, end=end)
    return views.json_response([views.metric(s) for s in samples])


def _unix_seconds(request: Request, name: str) -> int | None:
    value = query_value(request.query_params, name)
    return None if value is None else parse_int(value, name, minimum=0, maximum=INT64_MAX)


@router.post(
    "/sandboxes/{sandboxID}/timeout",
    operation_id="setSandboxTimeout",
    tags=["sandboxes"],
    status_code=204,
    responses=_errors(400, 401, 404, 500),
)
async def set_sandbox_timeout(request: Request, sandboxID: str) -> Response:
    _authorize(request)
    await _store(request).set_timeout(sandboxID, bodies.set_timeout(*await _body(request)))
    return Response(status_code=204)


@router.post(
    "/sandboxes/{sandboxID}/refreshes",
    operation_id="refreshSandbox",
    tags=["sandboxes"],
    status_code=204,
    responses=_errors(400, 401, 404, 409),
)
async def refresh_sandbox(request: Request, sandboxID: str) -> Response:
    _authorize(request)
    await _store(request).refresh(sandboxID, bodies.refresh(*await _body(request)))
    return Response(status_code=204)


_CONNECT_RESPONSES = {200: {"model": Sandbox}, 201: {"model": Sandbox}, **_errors(400, 401, 404, 409, 500)}


@router.post(
    "/sandboxes/{sandboxID}/connect", operation_id="connectSandbox", tags=["sandboxes"], responses=_CONNECT_RESPONSES
)
@router.post(
    "/v2/sandboxes/{sandboxID}/connect",
    operation_id="connectSandboxV2",
    tags=["sandboxes"],
    responses=_CONNECT_RESPONSES,
)
async def connect_sandbox(request: Request, sandboxID: str) -> Response:
    _authorize(request)
    seconds, memory = bodies.connect(*await _body(request))
    record, resumed = await _store(request).connect(sandboxID, seconds, memory=memory)
    await lifecycle.resumed(request, record)  # runtime: continue (or cold-start) its processes
    return views.json_response(views.sandbox(record), 201 if resumed else 200)


@router.post(
    "/sandboxes/{sandboxID}/pause",
    operation_id="pauseSandbox",
    tags=["sandboxes"],
    responses={200: {"model": SandboxPauseResult}, **_errors(400, 401, 404, 409, 500, 503)},
)
async def pause_sandbox(request: Request, sandboxID: str) -> Response:
    _authorize(request)
    memory, force = bodies.pause(*await _body(request))
    store = _store(request)
    await lifecycle.before_pause(request, sandboxID, force=force)  # runtime: its agent must answer
    forced = await store.pause(sandboxID, memory=memory, force=force)
    await lifecycle.paused(request, sandboxID)  # runtime: SIGSTOP every process, end its streams
    if store.settings.legacy_pause_204:
        return Response(status_code=204)
    return views.json_response(SandboxPauseResult(forced=forced))


@router.post(
    "/sandboxes/{sandboxID}/fork",
    operation_id="forkSandbox",
    tags=["sandboxes"],
    status_code=201,
    responses={201: {"model": list[SandboxForkResult]}, **_errors(400, 401, 404, 409, 500)},
)
async def fork_sandbox(request: Request, sandboxID: str) -> Response:
    _authorize(request)
    timeout, count = bodies.fork(*await _body(request))
    forks = await _store(request).fork(sandboxID, timeout=timeout, count=count)
    await lifecycle.forked(request, forks, sandboxID)  # runtime: each starts with a copy of the files
    return views.json_response([views.fork_result(r) for r in forks], 201, headers=lifecycle.isolation_headers(request))


@router.put(
    "/sandboxes/{sandboxID}/network",
    operation_id="updateSandboxNetwork",
    tags=["sandboxes"],
    status_code=204,
    responses=_errors(400, 401, 404, 409, 500),
)
async def update_sandbox_network(request: Request, sandboxID: str) -> Response:
    _authorize(request)
    await _store(request).update_network(sandboxID, bodies.network_update(*await _body(request)))
    return Response(status_code=204)


@router.post(
    "/sandboxes/{sandboxID}/snapshots",
    operation_id="createSnapshot",
    tags=["sandboxes"],
    status_code=201,
    responses={201: {"model": SnapshotInfo}, **_errors(400, 401, 404, 500)},
)
async def create_snapshot(request: Request, sandboxID: str) -> Response:
    _authorize(request)
    name, memory = bodies.snapshot(*await _body(request))
    snapshot = await _store(request).take_snapshot(sandboxID, name=name, memory=memory)
    await lifecycle.snapshotted(request, sandboxID, snapshot.template_id)  # runtime: copy the folder
    return views.json_response(views.snapshot_info(snapshot), 201)


# --- snapshots and templates -----------------------------------------------------------------------------------------


@router.get(
    "/snapshots",
    operation_id="listSnapshots",
    tags=["snapshots"],
    responses={200: {"model": list[SnapshotInfo]}, **_errors(400, 401, 500)},
)
async def list_snapshots(request: Request) -> Response:
    _authorize(request)
    params = request.query_params
    limit = query_value(params, "limit")
    page = await _store(request).snapshots_page(
        sandbox_id=query_value(params, "sandboxID"),
        name=query_value(params, "name"),
        next_token=query_value(params, "nextToken"),
        limit=listing.MAX_LIMIT if limit is None else parse_int(limit, "limit", minimum=1, maximum=listing.MAX_LIMIT),
    )
    headers = {"X-Next-Token": page.next_token} if page.next_token else None
    return views.json_response([views.snapshot_info(s) for s in page.items], headers=headers)


@router.get(
    "/templates",
    operation_id="listTemplates",
    tags=["templates"],
    responses={200: {"model": list[Template]}, **_errors(401, 500)},
)
async def list_templates(request: Request) -> Response:
    _authorize(request)
    return views.json_response([views.template(t) for t in await _store(request).templates()])


# `:path`: a snapshot's id holds a `/` (`local/name:default`), sent encoded as %2F and decoded before routing.
@router.delete(
    "/templates/{templateID:path}",
    operation_id="deleteTemplate",
    tags=["templates"],
    status_code=204,
    responses=_errors(401, 404, 500),
)
async def delete_template(request: Request, templateID: str) -> Response:
    _authorize(request)
    await _store(request).delete_template(templateID)
    return Response(status_code=204)
