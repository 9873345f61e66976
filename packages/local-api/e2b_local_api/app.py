"""Assemble the ASGI app: public routes, control surface, counters, faults.

Middleware order (outermost first): the host guard answers `421` to requests
addressed to another name (DNS rebinding) before anything else sees them;
request counting sees every request and
every answer, including injected faults; the fault injector then decides
whether the request reaches the API at all; the control surface's guard
refuses browser requests before any body is read; the body cap reads bodies
up to its limit and refuses larger ones (413).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Literal

from fastapi import FastAPI
from fastapi.exception_handlers import http_exception_handler
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match

from e2b_local_api.control import controls, routes
from e2b_local_api.control.auth import HEADER, AuthConfig
from e2b_local_api.http.body_limit import DEFAULT_BODY_TIMEOUT, DEFAULT_MAX_BODY_BYTES, BodyLimitMiddleware
from e2b_local_api.http.control_guard import ControlGuardMiddleware
from e2b_local_api.http.errors import ApiError, error_response, handle_api_error
from e2b_local_api.http.faults import FaultMiddleware, FaultQueue
from e2b_local_api.http.host_guard import HostGuardMiddleware
from e2b_local_api.http.stats import RequestStats, StatsMiddleware
from e2b_local_api.runtime.registry import Runtimes
from e2b_local_api.state.store import SandboxStore


def create_app(
    auth: AuthConfig | None = None,
    store: SandboxStore | None = None,
    *,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    body_timeout: float = DEFAULT_BODY_TIMEOUT,
    host: str = "127.0.0.1",
    runtimes: Runtimes | None = None,
) -> FastAPI:
    """The app; `host` is the address it is served on (`--host`), one of the names it answers to.

    With `runtimes` (runtime: the sandboxes run processes), its sandboxes are real; serve it
    behind `dataplane.routing.Router`, which sends envd requests to them.
    """
    state_store = store or SandboxStore()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        await state_store.close()
        if runtimes is not None:  # runtime: no sandbox process outlives the server
            await runtimes.close()

    app = FastAPI(
        title="E2B local API",
        description="In-memory implementation of the sandboxes, snapshots and templates operations of the E2B API.",
        version="0.1.0",
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.store = state_store
    app.state.auth = auth or AuthConfig()
    app.state.faults = FaultQueue()
    app.state.stats = RequestStats()
    app.state.runtimes = runtimes  # runtime
    if runtimes is not None:
        runtimes.records = state_store.all_records
        runtimes.forget_record = state_store.kill
    app.include_router(routes.router)
    app.include_router(controls.router)
    app.add_exception_handler(ApiError, handle_api_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_middleware(BodyLimitMiddleware, max_bytes=max_body_bytes, timeout=body_timeout)
    app.add_middleware(ControlGuardMiddleware)
    app.add_middleware(FaultMiddleware, faults=app.state.faults)
    app.add_middleware(StatsMiddleware, stats=app.state.stats)
    app.add_middleware(HostGuardMiddleware, bind_host=host)

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = _openapi(app)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app


_METHODS = ("DELETE", "GET", "PATCH", "POST", "PUT")


async def _http_error(request: Request, exc: Exception) -> Response:
    """Routing's refusals as the spec's `Error`: an unknown path (404), a wrong method (405).

    Starlette names only the first matching route's methods in a 405's `Allow`.

    `/sandboxes/{sandboxID}` is two routes (GET, DELETE); clients and the spec
    expect every method of the path, so the header is rebuilt from all routes.
    """
    assert isinstance(exc, HTTPException)
    if exc.status_code == 405:
        # Probe each method: routes may be nested (included routers), and a
        # full match is the one reliable signal across Starlette and FastAPI.
        allow = ", ".join(
            method
            for method in _METHODS
            if any(route.matches({**request.scope, "method": method})[0] is Match.FULL for route in request.app.routes)
        )
        error = ApiError(405, f"method {request.method} not allowed; allowed: {allow}")
        return error_response(error, headers={"Allow": allow})
    if exc.status_code == 404:
        # An unknown path: the spec's Error body, like every other refusal.
        return error_response(ApiError(404, f"no such path: {request.method} {request.url.path}"))
    return await http_exception_handler(request, exc)


def _openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's document plus what hand-parsed handlers hide: bodies and auth."""
    doc = get_openapi(title=app.title, version=app.version, routes=app.routes)
    components = doc.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    models: list[tuple[type[BaseModel], Literal["validation"]]] = [
        (model, "validation") for model, _ in routes.REQUEST_BODIES.values()
    ]
    refs, defs = models_json_schema(models, ref_template="#/components/schemas/{model}")
    schemas.update(defs.get("$defs", {}))
    components["securitySchemes"] = {"ApiKeyAuth": {"type": "apiKey", "in": "header", "name": HEADER}}
    # FastAPI documents a 422 for path parameters; this server answers 400 instead.
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    for path_item in doc.get("paths", {}).values():
        for operation in path_item.values():
            operation.get("responses", {}).pop("422", None)
            operation["security"] = [{"ApiKeyAuth": []}]
            body = routes.REQUEST_BODIES.get(operation.get("operationId", ""))
            if body is not None:
                model, required = body
                operation["requestBody"] = {
                    "required": required,
                    "content": {"application/json": {"schema": refs[(model, "validation")]}},
                }
    return doc
