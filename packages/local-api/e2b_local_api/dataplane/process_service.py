"""envd's `process.Process` service over the sandbox runtime.

Behaviour follows envd (github e2b-dev/infra, packages/envd/internal/services/
process): a stream opens with `start{pid}`, carries `data` and `keepalive`
(every `Keepalive-Ping-Interval` seconds without data, 90 by default) and ends
with `end`; a client that leaves ends its stream, never the process; Start's
deadline (`Connect-Timeout-Ms`) kills the process, as envd's does; stdin is open
unless the request says `stdin: false`; the user comes from Basic auth
(`user` by default).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import signal
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Literal, TypeVar

from connectrpc.code import Code
from connectrpc.errors import ConnectError
from connectrpc.request import RequestContext
from protobuf import Oneof

from e2b_local_api.dataplane.current import current_sandbox
from e2b_local_api.runtime.exits import Exit
from e2b_local_api.runtime.processes import ManagedProcess, Subscription
from e2b_local_api.runtime.sandbox import SandboxError, SandboxRuntime, Spawn
from e2b_local_api.wire.envd.process import process_pb as pb
from e2b_local_api.wire.envd.process.process_connect import Process

DEFAULT_USER = "user"
DEFAULT_KEEPALIVE_SECONDS = 90.0
_CODES = {
    "invalid_argument": Code.INVALID_ARGUMENT,
    "not_found": Code.NOT_FOUND,
    "resource_exhausted": Code.RESOURCE_EXHAUSTED,
    "unauthenticated": Code.UNAUTHENTICATED,
    "unavailable": Code.UNAVAILABLE,
}
_SIGNALS = {pb.Signal.SIGKILL: signal.SIGKILL, pb.Signal.SIGTERM: signal.SIGTERM}

R = TypeVar("R", pb.StartResponse, pb.ConnectResponse)


def _error(error: SandboxError) -> ConnectError:
    return ConnectError(_CODES.get(error.kind, Code.INTERNAL), str(error))


def _sandbox() -> SandboxRuntime:
    return current_sandbox.get()


def _user(ctx: RequestContext) -> str:  # type: ignore[type-arg]
    header = ctx.request_headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "basic" or not value:
        return DEFAULT_USER
    try:
        name = base64.b64decode(value, validate=True).decode().partition(":")[0]
    except (binascii.Error, UnicodeDecodeError) as error:
        raise ConnectError(Code.UNAUTHENTICATED, "the Authorization header is not valid Basic auth") from error
    return name or DEFAULT_USER


def _find(selector: pb.ProcessSelector | None, *, ended: bool = False) -> ManagedProcess:
    chosen = selector.selector if selector is not None else None
    if chosen is None:
        raise ConnectError(Code.INVALID_ARGUMENT, "name the process: a pid or a tag")
    try:
        if chosen.field == "pid":
            return _sandbox().find(pid=chosen.value, ended=ended)
        return _sandbox().find(tag=chosen.value, ended=ended)
    except SandboxError as error:
        raise _error(error) from error


def _keepalive_seconds(ctx: RequestContext) -> float:  # type: ignore[type-arg]
    try:
        seconds = float(ctx.request_headers.get("keepalive-ping-interval", ""))
    except ValueError:
        return DEFAULT_KEEPALIVE_SECONDS
    return seconds if seconds > 0 else DEFAULT_KEEPALIVE_SECONDS


def _event(item: tuple[str, bytes] | Exit) -> pb.ProcessEvent:
    if isinstance(item, Exit):
        end = pb.ProcessEvent.EndEvent(exit_code=item.exit_code, exited=item.exited, status=item.status)
        if item.error is not None:
            end.error = item.error
        ended: Oneof[Literal["end"], pb.ProcessEvent.EndEvent] = Oneof("end", end)
        return pb.ProcessEvent(event=ended)
    stream, data = item
    if stream == "stdout":
        stdout: Oneof[Literal["stdout"], bytes] = Oneof("stdout", data)
        chunk = pb.ProcessEvent.DataEvent(output=stdout)
    elif stream == "stderr":
        stderr: Oneof[Literal["stderr"], bytes] = Oneof("stderr", data)
        chunk = pb.ProcessEvent.DataEvent(output=stderr)
    else:
        terminal: Oneof[Literal["pty"], bytes] = Oneof("pty", data)
        chunk = pb.ProcessEvent.DataEvent(output=terminal)
    carried: Oneof[Literal["data"], pb.ProcessEvent.DataEvent] = Oneof("data", chunk)
    return pb.ProcessEvent(event=carried)


def _started(pid: int) -> pb.ProcessEvent:
    started: Oneof[Literal["start"], pb.ProcessEvent.StartEvent] = Oneof("start", pb.ProcessEvent.StartEvent(pid=pid))
    return pb.ProcessEvent(event=started)


def _keepalive() -> pb.ProcessEvent:
    keepalive: Oneof[Literal["keepalive"], pb.ProcessEvent.KeepAlive] = Oneof("keepalive", pb.ProcessEvent.KeepAlive())
    return pb.ProcessEvent(event=keepalive)


async def _events(
    process: ManagedProcess,
    subscription: Subscription,
    make: Callable[[pb.ProcessEvent], R],
    keepalive: float,
    deadline: float | None,
) -> AsyncGenerator[R, None]:
    loop = asyncio.get_running_loop()
    try:
        yield make(_started(process.pid))
        while True:
            wait = keepalive
            if deadline is not None:
                left = deadline - loop.time()
                if left <= 0:
                    raise ConnectError(Code.DEADLINE_EXCEEDED, "the request's deadline (Connect-Timeout-Ms) passed")
                wait = min(wait, left)
            item = await subscription.next(wait)
            if item is None:
                if deadline is None or loop.time() < deadline:
                    yield make(_keepalive())
                continue
            yield make(_event(item))
            if isinstance(item, Exit):
                return
    finally:
        process.unsubscribe(subscription)  # the client left or the stream ended: the process goes on


class ProcessService(Process):
    """Implements the generated `Process` protocol for the request's sandbox."""

    async def start(
        self, request: pb.StartRequest, ctx: RequestContext[pb.StartRequest, pb.StartResponse]
    ) -> AsyncIterator[pb.StartResponse]:
        config = request.process
        if config is None or not config.cmd:
            raise ConnectError(Code.INVALID_ARGUMENT, "process.cmd is required: the program to run")
        size = None
        if request.pty is not None:
            given = request.pty.size
            size = (given.cols, given.rows) if given is not None else (80, 24)
            if not (0 < size[0] < 65536 and 0 < size[1] < 65536):
                raise ConnectError(Code.INVALID_ARGUMENT, f"pty size must be 1-65535 cols and rows, got {size}")
        spawn = Spawn(
            cmd=config.cmd,
            args=tuple(config.args),
            envs=dict(config.envs),
            cwd=config.cwd if config.has_field("cwd") else None,
            user=_user(ctx),
            stdin=request.stdin if request.has_field("stdin") else True,
            pty_size=size,
            tag=request.tag if request.has_field("tag") else None,
            config=config,
        )
        sandbox = _sandbox()
        try:
            process = await sandbox.spawn(spawn)
        except SandboxError as error:
            raise _error(error) from error
        subscription = process.subscribe()  # before any await: no output is missed
        loop = asyncio.get_running_loop()
        timeout_ms = ctx.timeout_ms
        deadline = None
        if timeout_ms:
            deadline = loop.time() + timeout_ms / 1000
            loop.call_later(timeout_ms / 1000, _kill_at_deadline, sandbox, process)
        events = _events(process, subscription, lambda e: pb.StartResponse(event=e), _keepalive_seconds(ctx), deadline)
        async with contextlib.aclosing(events):
            async for response in events:
                yield response

    async def connect(
        self, request: pb.ConnectRequest, ctx: RequestContext[pb.ConnectRequest, pb.ConnectResponse]
    ) -> AsyncIterator[pb.ConnectResponse]:
        process = _find(request.process, ended=True)
        subscription = process.subscribe()
        timeout_ms = ctx.timeout_ms
        deadline = asyncio.get_running_loop().time() + timeout_ms / 1000 if timeout_ms else None
        events = _events(
            process, subscription, lambda e: pb.ConnectResponse(event=e), _keepalive_seconds(ctx), deadline
        )
        async with contextlib.aclosing(events):
            async for response in events:
                yield response

    async def list(
        self, request: pb.ListRequest, ctx: RequestContext[pb.ListRequest, pb.ListResponse]
    ) -> pb.ListResponse:
        infos = []
        for process in _sandbox().processes.values():
            info = pb.ProcessInfo(config=process.config, pid=process.pid)  # type: ignore[arg-type]
            if process.tag is not None:
                info.tag = process.tag
            infos.append(info)
        return pb.ListResponse(processes=infos)

    async def update(
        self, request: pb.UpdateRequest, ctx: RequestContext[pb.UpdateRequest, pb.UpdateResponse]
    ) -> pb.UpdateResponse:
        process = _find(request.process)
        if request.pty is not None and request.pty.size is not None:
            size = request.pty.size
            if not (0 < size.cols < 65536 and 0 < size.rows < 65536):
                raise ConnectError(
                    Code.INVALID_ARGUMENT, f"pty size must be 1-65535 cols and rows, got {size.cols}x{size.rows}"
                )
            try:
                process.resize(size.cols, size.rows)
            except (ValueError, OSError) as error:
                raise ConnectError(Code.INTERNAL, f"error resizing tty: {error}") from error
        return pb.UpdateResponse()

    async def send_input(
        self, request: pb.SendInputRequest, ctx: RequestContext[pb.SendInputRequest, pb.SendInputResponse]
    ) -> pb.SendInputResponse:
        await _write(_find(request.process), request.input)
        return pb.SendInputResponse()

    async def stream_input(
        self,
        request: AsyncIterator[pb.StreamInputRequest],
        ctx: RequestContext[pb.StreamInputRequest, pb.StreamInputResponse],
    ) -> pb.StreamInputResponse:
        process: ManagedProcess | None = None
        async for message in request:
            event = message.event
            if event is None or event.field == "keepalive":
                continue
            if event.field == "start":
                process = _find(event.value.process)
            elif process is None:
                raise ConnectError(Code.INVALID_ARGUMENT, "the stream's first event must be start{process}")
            else:
                await _write(process, event.value.input)
        return pb.StreamInputResponse()

    async def close_stdin(
        self, request: pb.CloseStdinRequest, ctx: RequestContext[pb.CloseStdinRequest, pb.CloseStdinResponse]
    ) -> pb.CloseStdinResponse:
        process = _find(request.process)
        try:
            process.close_stdin()
        except ValueError as error:
            raise ConnectError(Code.FAILED_PRECONDITION, f"error closing stdin: {error}") from error
        return pb.CloseStdinResponse()

    async def send_signal(
        self, request: pb.SendSignalRequest, ctx: RequestContext[pb.SendSignalRequest, pb.SendSignalResponse]
    ) -> pb.SendSignalResponse:
        process = _find(request.process)
        number = _SIGNALS.get(request.signal)
        if number is None:
            raise ConnectError(
                Code.UNIMPLEMENTED, f"invalid signal: {request.signal}; only SIGKILL and SIGTERM are sent"
            )
        try:
            await _sandbox().signal(process, number)
        except SandboxError as error:
            raise _error(error) from error
        return pb.SendSignalResponse()


async def _write(process: ManagedProcess, given: pb.ProcessInput | None) -> None:
    chosen = given.input if given is not None else None
    if chosen is None:
        raise ConnectError(Code.INVALID_ARGUMENT, "input is required: stdin or pty bytes")
    try:
        if chosen.field == "stdin":
            await process.write_stdin(chosen.value)
        else:
            await process.write_pty(chosen.value)
    except (ValueError, OSError) as error:
        raise ConnectError(Code.INTERNAL, f"error writing to {chosen.field}: {error}") from error


_KILLS: set[asyncio.Task[None]] = set()  # strong references: the loop keeps only weak ones


def _kill_at_deadline(sandbox: SandboxRuntime, process: ManagedProcess) -> None:
    if process.exit is None and not sandbox.ended:
        task = asyncio.ensure_future(_kill(sandbox, process))
        _KILLS.add(task)
        task.add_done_callback(_KILLS.discard)


async def _kill(sandbox: SandboxRuntime, process: ManagedProcess) -> None:
    with contextlib.suppress(SandboxError):  # it ended meanwhile, or its sandbox did
        await sandbox.signal(process, signal.SIGKILL)
