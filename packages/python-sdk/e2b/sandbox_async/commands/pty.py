"""`sbx.pty`: interactive terminals in the sandbox, `bash -i -l` on a pseudo-terminal."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from protobuf import Oneof

from e2b.envd.process import process_pb
from e2b.sandbox import arguments
from e2b.sandbox._flavour_async.command_input_handle import AsyncStreamingInput
from e2b.sandbox._flavour_async.steps import first_item
from e2b.sandbox.commands.command_handle import PtyOutput, PtySize, start_pid
from e2b.sandbox.commands.stream_input import InputKind
from e2b.sandbox_async.commands.command import _close, _selector, kill_process
from e2b.sandbox_async.commands.command_handle import AsyncCommandHandle
from e2b.sandbox_async.envd_client import EnvdClient

__all__ = ["Pty"]

# What a terminal gets unless the caller says otherwise: colours and UTF-8.
TERMINAL_ENVS = {"TERM": "xterm-256color", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}


def _pty(size: PtySize) -> process_pb.PTY:
    rows, cols = arguments.pty_size(size)
    return process_pb.PTY(size=process_pb.PTY.Size(rows=rows, cols=cols))


class Pty(AsyncStreamingInput):
    """Terminals in the sandbox: create one, send it keys, resize it, kill it."""

    _input_kind: InputKind = "pty"

    def __init__(self, envd: EnvdClient) -> None:
        self._envd = envd

    async def kill(self, pid: int, request_timeout: float | None = None) -> bool:
        """Kill the terminal `pid` with SIGKILL; False when there was no such process."""
        return await kill_process(self._envd, pid, request_timeout)

    async def send_stdin(self, pid: int, data: bytes, request_timeout: float | None = None) -> None:
        """Send `data` to the terminal `pid` as typed keys (b"\\x04" is Ctrl-D)."""
        payload = arguments.text_or_bytes("data", data)
        field: Literal["pty"] = "pty"
        request = process_pb.SendInputRequest(
            process=_selector(pid), input=process_pb.ProcessInput(input=Oneof(field, payload))
        )
        await self._envd.unary(
            self._envd.process.send_input,
            request,
            headers=self._envd.headers(),
            request_timeout=request_timeout,
            idempotent=False,
        )

    async def create(
        self,
        size: PtySize,
        on_data: Callable[[PtyOutput], object] | None = None,
        user: str | None = None,
        cwd: str | None = None,
        envs: Mapping[str, str] | None = None,
        timeout: float | None = 60,
        request_timeout: float | None = None,
    ) -> AsyncCommandHandle[Any]:
        """Start a terminal of `size`; `on_data` gets its output as bytes (else, iterate the handle or `wait()`).

        Args:
            size: rows and columns, each from 1 to 65535.
            timeout: seconds the terminal may stay open, 0 for no limit (default 60).
        """
        _check_on_data(on_data)
        pty = _pty(size)
        config = process_pb.ProcessConfig(
            cmd="/bin/bash",
            args=["-i", "-l"],
            envs={**TERMINAL_ENVS, **arguments.envs(envs)},
            cwd=arguments.optional_text("cwd", cwd),
        )
        stream_timeout = arguments.stream_timeout("timeout", timeout)
        user = arguments.optional_text("user", user)
        events = self._envd.process.start(
            process_pb.StartRequest(process=config, pty=pty),
            headers=self._envd.stream_headers(user, user_given=True, stream_timeout=stream_timeout),
            **self._envd.stream_options(stream_timeout),
        )
        return await self._handle(events, stream_timeout, "start the terminal", request_timeout, on_data)

    async def connect(
        self,
        pid: int,
        on_data: Callable[[PtyOutput], object] | None = None,
        timeout: float | None = 60,
        request_timeout: float | None = None,
    ) -> AsyncCommandHandle[Any]:
        """A handle to the running terminal `pid`, reading its output from now on."""
        _check_on_data(on_data)
        stream_timeout = arguments.stream_timeout("timeout", timeout)
        events = self._envd.process.connect(
            process_pb.ConnectRequest(process=_selector(pid)),
            headers=self._envd.stream_headers(stream_timeout=stream_timeout),
            **self._envd.stream_options(stream_timeout),
        )
        return await self._handle(events, stream_timeout, "connect to the terminal", request_timeout, on_data)

    async def resize(self, pid: int, size: PtySize, request_timeout: float | None = None) -> None:
        """Tell the terminal `pid` its new size."""
        request = process_pb.UpdateRequest(process=_selector(pid), pty=_pty(size))
        await self._envd.unary(
            self._envd.process.update,
            request,
            headers=self._envd.headers(),
            request_timeout=request_timeout,
            idempotent=True,
        )

    async def _handle(
        self,
        events: Any,
        stream_timeout: float | None,
        action: str,
        request_timeout: float | None,
        on_data: Callable[[PtyOutput], object] | None,
    ) -> AsyncCommandHandle[Any]:
        stream = self._envd.stream_items(events, stream_timeout=stream_timeout)
        try:
            first = await first_item(stream, self._envd.request_timeout(request_timeout), f"could not {action}")
            pid = start_pid(first, action)
        except BaseException:
            await _close(stream)
            raise

        async def kill() -> bool:
            return await self.kill(pid)

        async def close_stream() -> None:
            await _close(stream)

        return AsyncCommandHandle(pid=pid, handle_kill=kill, events=stream, on_pty=on_data, close_stream=close_stream)


def _check_on_data(on_data: object) -> None:
    # 2.x's sync `create(size, user)` had no on_data: a user passed there is refused, never called.
    if on_data is not None and not callable(on_data):
        raise TypeError("on_data must be a callable taking the output's bytes: pass user and the rest as keywords")
