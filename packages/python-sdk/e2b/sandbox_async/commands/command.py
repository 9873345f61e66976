"""`sbx.commands`: run shell commands in the sandbox, connect to running ones, list and signal them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, Literal, overload

from connectrpc.code import Code
from protobuf import Oneof

from e2b._exceptions import TemplateException
from e2b.envd.process import process_pb
from e2b.sandbox import arguments, versions
from e2b.sandbox._flavour_async.command_input_handle import AsyncStreamingInput
from e2b.sandbox._flavour_async.steps import call, first_item
from e2b.sandbox.commands.command_handle import CommandResult, Stderr, Stdout, start_pid
from e2b.sandbox.commands.main import ProcessInfo, process_info
from e2b.sandbox.commands.stream_input import InputKind
from e2b.sandbox_async.commands.command_handle import AsyncCommandHandle
from e2b.sandbox_async.envd_client import EnvdClient

__all__ = ["Commands"]


def _selector(pid: int) -> process_pb.ProcessSelector:
    field: Literal["pid"] = "pid"
    return process_pb.ProcessSelector(selector=Oneof(field, arguments.pid(pid)))


class Commands(AsyncStreamingInput):
    """Shell commands in the sandbox: each runs as `/bin/bash -l -c <cmd>`."""

    _input_kind: InputKind = "stdin"

    def __init__(self, envd: EnvdClient) -> None:
        self._envd = envd

    async def list(self, request_timeout: float | None = None) -> list[ProcessInfo]:
        """The commands and terminals envd started that still run."""
        response = await self._envd.unary(
            self._envd.process.list,
            process_pb.ListRequest(),
            headers=self._envd.headers(),
            request_timeout=request_timeout,
            idempotent=True,
        )
        return [process_info(process) for process in response.processes]

    async def kill(self, pid: int, request_timeout: float | None = None) -> bool:
        """Kill the process `pid` with SIGKILL; False when there was no such process."""
        return await kill_process(self._envd, pid, request_timeout)

    async def send_stdin(self, pid: int, data: str | bytes, request_timeout: float | None = None) -> None:
        """Write `data` (str is sent as UTF-8) to the standard input of `pid`, started with `stdin=True`."""
        payload = arguments.text_or_bytes("data", data)
        field: Literal["stdin"] = "stdin"
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

    async def close_stdin(self, pid: int, request_timeout: float | None = None) -> None:
        """Close the standard input of `pid` (end of file)."""
        if self._envd.endpoint.version < versions.ENVD_ENVD_CLOSE:
            raise TemplateException(
                f"closing stdin needs envd {versions.shown(versions.ENVD_ENVD_CLOSE)} or later; the sandbox has "
                f"{versions.shown(self._envd.endpoint.version)}: rebuild its template"
            )
        await self._envd.unary(
            self._envd.process.close_stdin,
            process_pb.CloseStdinRequest(process=_selector(pid)),
            headers=self._envd.headers(),
            request_timeout=request_timeout,
            idempotent=False,
        )

    @overload
    async def run(
        self,
        cmd: str,
        background: Literal[False] | None = None,
        envs: Mapping[str, str] | None = None,
        user: str | None = None,
        cwd: str | None = None,
        on_stdout: Callable[[Stdout], object] | None = None,
        on_stderr: Callable[[Stderr], object] | None = None,
        stdin: bool | None = None,
        timeout: float | None = 60,
        request_timeout: float | None = None,
        *,
        retain_output: bool = True,
    ) -> CommandResult[Any]: ...

    @overload
    async def run(
        self,
        cmd: str,
        background: Literal[True],
        envs: Mapping[str, str] | None = None,
        user: str | None = None,
        cwd: str | None = None,
        on_stdout: Callable[[Stdout], object] | None = None,
        on_stderr: Callable[[Stderr], object] | None = None,
        stdin: bool | None = None,
        timeout: float | None = 60,
        request_timeout: float | None = None,
        *,
        retain_output: bool = True,
    ) -> AsyncCommandHandle[Any]: ...

    async def run(
        self,
        cmd: str,
        background: bool | None = None,
        envs: Mapping[str, str] | None = None,
        user: str | None = None,
        cwd: str | None = None,
        on_stdout: Callable[[Stdout], object] | None = None,
        on_stderr: Callable[[Stderr], object] | None = None,
        stdin: bool | None = None,
        timeout: float | None = 60,
        request_timeout: float | None = None,
        *,
        retain_output: bool = True,
    ) -> CommandResult[Any] | AsyncCommandHandle[Any]:
        """Run `cmd` with bash; its result (foreground) or a handle to it (`background=True`).

        Args:
            cmd: the command line, as bash reads it.
            background: return at once with an `AsyncCommandHandle` instead of waiting.
            envs: environment variables for the command.
            user: the user to run it as (default: the sandbox's).
            cwd: its working directory.
            on_stdout, on_stderr: called with each piece of output as it arrives.
            stdin: keep its standard input open for `send_stdin` (default: closed).
            timeout: seconds the command may run, 0 for no limit (default 60).
            request_timeout: seconds for the start to be answered.
            retain_output: keep the output for the result (False: only the callbacks see it).

        Raises:
            CommandExitException: in the foreground, the command exited with another status than 0.
            InvalidArgumentException: a value the SDK refuses; nothing was sent.
        """
        command = arguments.command(cmd)
        config = process_pb.ProcessConfig(
            cmd="/bin/bash",
            args=["-l", "-c", command],
            envs=arguments.envs(envs),
            cwd=arguments.optional_text("cwd", cwd),
        )
        stream_timeout = arguments.stream_timeout("timeout", timeout)
        user = arguments.optional_text("user", user)
        if stdin is False and self._envd.endpoint.version < versions.ENVD_COMMANDS_STDIN:
            raise TemplateException(
                f"stdin=False needs envd {versions.shown(versions.ENVD_COMMANDS_STDIN)} or later (an older one "
                "always keeps stdin open): rebuild the sandbox's template"
            )
        request = process_pb.StartRequest(process=config, stdin=bool(stdin))
        events = self._envd.process.start(
            request,
            headers=self._envd.stream_headers(user, user_given=True, stream_timeout=stream_timeout),
            **self._envd.stream_options(stream_timeout),
        )
        if not background and on_stdout is None and on_stderr is None:
            # Nothing of the caller's runs before the result: the sync flavour waits for the whole
            # command in one step on its worker (start, end, end of stream), not in one per event.
            return await call(self._run_quietly, events, stream_timeout, request_timeout, retain_output)
        handle = await self._handle(
            events, stream_timeout, "start the command", request_timeout, on_stdout, on_stderr, retain_output
        )
        if background:
            return handle
        return await handle.wait()

    async def _run_quietly(
        self,
        events: AsyncIterator[Any],
        stream_timeout: float | None,
        request_timeout: float | None,
        retain_output: bool,
    ) -> CommandResult[Any]:
        handle = await self._handle(
            events, stream_timeout, "start the command", request_timeout, None, None, retain_output
        )
        return await handle.wait()

    async def connect(
        self,
        pid: int,
        timeout: float | None = 60,
        request_timeout: float | None = None,
        on_stdout: Callable[[Stdout], object] | None = None,
        on_stderr: Callable[[Stderr], object] | None = None,
        *,
        retain_output: bool = True,
    ) -> AsyncCommandHandle[Any]:
        """A handle to the running command `pid`, reading its output from now on."""
        request = process_pb.ConnectRequest(process=_selector(pid))
        stream_timeout = arguments.stream_timeout("timeout", timeout)
        events = self._envd.process.connect(
            request,
            headers=self._envd.stream_headers(stream_timeout=stream_timeout),
            **self._envd.stream_options(stream_timeout),
        )
        return await self._handle(
            events, stream_timeout, "connect to the command", request_timeout, on_stdout, on_stderr, retain_output
        )

    async def _handle(
        self,
        events: AsyncIterator[Any],
        stream_timeout: float | None,
        action: str,
        request_timeout: float | None,
        on_stdout: Callable[[Stdout], object] | None,
        on_stderr: Callable[[Stderr], object] | None,
        retain_output: bool,
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

        async def send_stdin(data: str | bytes, request_timeout: float | None = None) -> None:
            await self.send_stdin(pid, data, request_timeout)

        async def close_stdin(request_timeout: float | None = None) -> None:
            await self.close_stdin(pid, request_timeout)

        async def close_stream() -> None:
            await _close(stream)

        return AsyncCommandHandle(
            pid=pid,
            handle_kill=kill,
            events=stream,
            on_stdout=on_stdout,
            on_stderr=on_stderr,
            handle_send_stdin=send_stdin,
            handle_close_stdin=close_stdin,
            close_stream=close_stream,
            retain_output=retain_output,
        )


async def _close(stream: AsyncIterator[Any]) -> None:
    """End a stream the SDK stops reading; it goes no further than the connection's close."""
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        try:
            await aclose()
        except Exception:
            pass


async def kill_process(envd: EnvdClient, pid: int, request_timeout: float | None) -> bool:
    """SIGKILL to the process `pid` (a command's or a terminal's); False when envd has no such process."""
    request = process_pb.SendSignalRequest(process=_selector(pid), signal=process_pb.Signal.SIGKILL)
    answer: object = await envd.unary(
        envd.process.send_signal,
        request,
        headers=envd.headers(),
        request_timeout=request_timeout,
        idempotent=False,
        answers={Code.NOT_FOUND: False},
    )
    return answer is not False
