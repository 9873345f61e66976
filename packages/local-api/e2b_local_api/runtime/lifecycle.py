"""What the control plane's routes tell the runtime after the store decided (one call per route).

Every function does nothing when the app has no runtime (`create_app()` alone:
records only, as before).
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.requests import Request

from e2b_local_api.http.errors import ApiError
from e2b_local_api.runtime.isolation import Mode
from e2b_local_api.runtime.registry import Record, Runtimes
from e2b_local_api.runtime.sandbox import SandboxError

ISOLATION_HEADER = "X-E2B-Local-Isolation"


def _runtimes(request: Request) -> Runtimes | None:
    return getattr(request.app.state, "runtimes", None)


async def created(request: Request, record: Record) -> None:
    runtimes = _runtimes(request)
    if runtimes is None:
        return
    try:
        await runtimes.start(record)
    except SandboxError as error:
        await request.app.state.store.kill(record.sandbox_id)
        raise ApiError(500, str(error)) from error


def isolation_headers(request: Request) -> dict[str, str] | None:
    """What a create (or fork) answer adds when its sandboxes are not isolated: `X-E2B-Local-Isolation: none`,
    for clients that look (SDKs ignore headers they do not know); the server's log says it too."""
    runtimes = _runtimes(request)
    if runtimes is None or runtimes.isolation.mode is not Mode.NONE:
        return None
    return {ISOLATION_HEADER: Mode.NONE.value}


async def forked(request: Request, records: Iterable[Record], source_id: str) -> None:
    runtimes = _runtimes(request)
    if runtimes is None:
        return
    forks = list(records)
    for record in forks:
        try:
            await runtimes.start(record, copy_of=source_id)
        except SandboxError as error:
            # One fork that cannot run fails the request: none of its forks stays, running or listed.
            for fork in forks:
                runtimes.kill(fork.sandbox_id)
                await request.app.state.store.kill(fork.sandbox_id)
            raise ApiError(500, str(error)) from error


def killed(request: Request, sandbox_id: str) -> None:
    runtimes = _runtimes(request)
    if runtimes is not None:
        runtimes.kill(sandbox_id)


async def before_pause(request: Request, sandbox_id: str, *, force: bool) -> None:
    runtimes = _runtimes(request)
    if runtimes is not None:
        await runtimes.check_pausable(sandbox_id, force=force)


async def paused(request: Request, sandbox_id: str) -> None:
    runtimes = _runtimes(request)
    if runtimes is None:
        return
    record = await request.app.state.store.get(sandbox_id)
    runtimes.freeze(sandbox_id, reboots=record.reboots)


async def resumed(request: Request, record: Record) -> None:
    runtimes = _runtimes(request)
    if runtimes is None:
        return
    try:
        await runtimes.resume(record)
    except SandboxError as error:
        # The record says running: a sandbox that cannot run is killed, as a create that cannot start is.
        runtimes.kill(record.sandbox_id)
        await request.app.state.store.kill(record.sandbox_id)
        raise ApiError(500, f"{error}; it was killed") from error


async def snapshotted(request: Request, sandbox_id: str, template_id: str) -> None:
    runtimes = _runtimes(request)
    if runtimes is not None:
        await runtimes.snapshot(sandbox_id, template_id)
