"""The public API: the `sandboxes` operations of spec/openapi.yml.

Handlers read raw requests and validate them with `validation` (not FastAPI's
body parameters) so every bad request is the spec's 400 `Error`, never
FastAPI's 422, and so validation is strict.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

from fastapi import APIRouter
from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import Response

from e2b_local_api import views
from e2b_local_api.auth import AuthConfig, require_api_key
from e2b_local_api.errors import bad_request
from e2b_local_api.store import SandboxStore
from e2b_local_api.validation import parse_body, parse_int
from e2b_local_api.wire import ConnectSandboxRequest
from e2b_local_api.wire.models import (
    Error,
    ListedSandbox,
    NewSandbox,
    Sandbox,
    SandboxDetail,
    SandboxPauseRequest,
    SandboxPauseResult,
    SandboxState,
    SandboxTimeoutRequest,
)

MAX_LIMIT = 100

# Request body models per operation; app.py adds them to the served OpenAPI.
REQUEST_BODIES: dict[str, tuple[type[BaseModel], bool]] = {
    "createSandbox": (NewSandbox, True),
    "setSandboxTimeout": (SandboxTimeoutRequest, True),
    "connectSandbox": (ConnectSandboxRequest, True),
    "pauseSandbox": (SandboxPauseRequest, False),
}


def _errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    return {status: {"model": Error} for status in statuses}


router = APIRouter(tags=["sandboxes"])


def _store(request: Request) -> SandboxStore:
    store: SandboxStore = request.app.state.store
    return store


def _authorize(request: Request, *query: str) -> None:
    """Check the API key, then that only the operation's `query` parameters were sent.

    Unknown parameters are a 400 rather than ignored: a misspelt filter would
    otherwise silently return everything.
    """
    config: AuthConfig = request.app.state.auth
    require_api_key(request, config)
    unknown = sorted(set(request.query_params) - set(query))
    if unknown:
        raise bad_request(f"unknown query parameter(s): {', '.join(map(repr, unknown))}")


@router.post(
    "/sandboxes",
    operation_id="createSandbox",
    status_code=201,
    responses={201: {"model": Sandbox}, **_errors(400, 401, 429, 500)},
)
async def create_sandbox(request: Request) -> Response:
    _authorize(request)
    body = parse_body(await request.body(), NewSandbox, content_type=request.headers.get("content-type"))
    record = await _store(request).create(body)
    return views.json_response(views.sandbox(record), 201)


@router.get(
    "/v2/sandboxes",
    operation_id="listSandboxes",
    responses={200: {"model": list[ListedSandbox]}, **_errors(400, 401, 500)},
)
async def list_sandboxes(request: Request) -> Response:
    _authorize(request, "state", "metadata", "nextToken", "limit")
    query = request.query_params
    states = _parse_states(query.getlist("state"))
    # The metadata filter is itself a URL-encoded query: `user=abc&app=prod`.
    metadata = dict(parse_qsl(query.get("metadata", ""), keep_blank_values=True))
    limit = parse_int(query.get("limit", str(MAX_LIMIT)), "limit", minimum=1, maximum=MAX_LIMIT)
    page = await _store(request).page(states, metadata, query.get("nextToken"), limit)
    headers = {"X-Next-Token": page.next_token} if page.next_token else None
    return views.json_response([views.listed(r) for r in page.items], headers=headers)


def _parse_states(values: list[str]) -> list[SandboxState]:
    """`style: form, explode: false`: `state=running,paused`; repeats are accepted too.

    No `state` parameter means every state. A present one must name states only:
    `state=` and `state=,,` hold empty items, which the spec's enum forbids.
    """
    if not values:
        return list(SandboxState)
    try:
        return [SandboxState(name) for value in values for name in value.split(",")]
    except ValueError:
        allowed = ", ".join(s.value for s in SandboxState)
        raise bad_request(f"state: expected a comma-separated list of {allowed}") from None


@router.get(
    "/sandboxes/{sandboxID}",
    operation_id="getSandbox",
    responses={200: {"model": SandboxDetail}, **_errors(401, 404, 500)},
)
async def get_sandbox(request: Request, sandboxID: str) -> Response:
    _authorize(request)
    record = await _store(request).get(sandboxID)
    return views.json_response(views.detail(record))


@router.delete(
    "/sandboxes/{sandboxID}",
    operation_id="killSandbox",
    status_code=204,
    responses=_errors(401, 404, 500),
)
async def kill_sandbox(request: Request, sandboxID: str) -> Response:
    _authorize(request)
    await _store(request).kill(sandboxID)
    return Response(status_code=204)


@router.post(
    "/sandboxes/{sandboxID}/timeout",
    operation_id="setSandboxTimeout",
    status_code=204,
    responses=_errors(400, 401, 404, 500),
)
async def set_sandbox_timeout(request: Request, sandboxID: str) -> Response:
    _authorize(request)
    body = parse_body(await request.body(), SandboxTimeoutRequest, content_type=request.headers.get("content-type"))
    await _store(request).set_timeout(sandboxID, body.timeout)
    return Response(status_code=204)


@router.post(
    "/sandboxes/{sandboxID}/connect",
    operation_id="connectSandbox",
    responses={
        200: {"model": Sandbox},
        201: {"model": Sandbox},
        **_errors(400, 401, 404, 500),
    },
)
async def connect_sandbox(request: Request, sandboxID: str) -> Response:
    _authorize(request)
    body = parse_body(await request.body(), ConnectSandboxRequest, content_type=request.headers.get("content-type"))
    # Not every spec shape has on_resume (the runtime's ConnectSandbox does not).
    mode = getattr(body, "on_resume", None)
    record, resumed = await _store(request).connect(sandboxID, body.timeout, None if mode is None else mode.value)
    return views.json_response(views.sandbox(record), 201 if resumed else 200)


@router.post(
    "/sandboxes/{sandboxID}/pause",
    operation_id="pauseSandbox",
    responses={200: {"model": SandboxPauseResult}, **_errors(400, 401, 404, 409, 500, 503)},
)
async def pause_sandbox(request: Request, sandboxID: str) -> Response:
    _authorize(request)
    body = parse_body(
        await request.body(), SandboxPauseRequest, content_type=request.headers.get("content-type"), optional=True
    )
    store = _store(request)
    forced = await store.pause(sandboxID, memory=body.memory is not False, force=body.force is True)
    if store.settings.legacy_pause_204:
        return Response(status_code=204)
    return views.json_response(SandboxPauseResult(forced=forced))
