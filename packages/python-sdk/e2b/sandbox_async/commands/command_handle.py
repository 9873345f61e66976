"""`AsyncCommandHandle`: a command or terminal started in the sandbox, and its output as it comes.

Output is read from the stream only as fast as it is consumed, into the
callbacks and to a loop over the handle (`for stdout, stderr, pty in
handle`); when it is read is the flavour's own (`_flavour.Pump`), as in
e2b 2.x. The handle keeps the output for `stdout`/`stderr` and the result
unless started with `retain_output=False`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any, Generic, cast

from e2b._exceptions import SandboxException
from e2b.sandbox._flavour_async.steps import Pump, Routine, call_handler
from e2b.sandbox.commands.command_handle import (
    BytesEvent,
    CommandResult,
    OutputDecoder,
    OutputEvent,
    OutputT,
    PtyOutput,
    Stderr,
    Stdout,
)

__all__ = ["AsyncCommandHandle"]

OutputHandler = Callable[[Any], object]


class AsyncCommandHandle(Generic[OutputT]):
    """A running command (or terminal): its pid, its output, and the calls that act on it."""

    def __init__(
        self,
        pid: int,
        handle_kill: Routine[[], bool],
        events: AsyncIterator[Any],
        on_stdout: OutputHandler | None = None,
        on_stderr: OutputHandler | None = None,
        on_pty: OutputHandler | None = None,
        handle_send_stdin: Routine[[str | bytes, float | None], None] | None = None,
        handle_close_stdin: Routine[[float | None], None] | None = None,
        close_stream: Routine[[], None] | None = None,
        retain_output: bool = True,
    ) -> None:
        self._pid = pid
        self._handle_kill = handle_kill
        self._handle_send_stdin = handle_send_stdin
        self._handle_close_stdin = handle_close_stdin
        self._close_stream = close_stream
        self._events = events
        self._decoder = OutputDecoder(retain_output)
        self._on_stdout, self._on_stderr, self._on_pty = on_stdout, on_stderr, on_pty
        self._pump: Pump[OutputEvent | BytesEvent] = Pump(self._read, self._deliver)

    @property
    def pid(self) -> int:
        """The process's id in the sandbox."""
        return self._pid

    @property
    def stdout(self) -> OutputT:
        """The standard output read so far (None with `retain_output=False`)."""
        return self._decoder.stdout  # type: ignore[return-value]

    @property
    def stderr(self) -> OutputT:
        """The standard error read so far (None with `retain_output=False`)."""
        return self._decoder.stderr  # type: ignore[return-value]

    @property
    def exit_code(self) -> int | None:
        """The exit status once the command ended and its end was read, else None."""
        return self._decoder.exit_code

    @property
    def error(self) -> str | None:
        """envd's reason when the process did not end normally, once known."""
        return self._decoder.error

    def __aiter__(self) -> AsyncIterator[OutputEvent]:
        """`(stdout, stderr, pty)` tuples as the output arrives, exactly one of them set; ends with the command."""
        # Bytes only after `_pass_bytes()`, which no public caller makes.
        return cast(AsyncIterator[OutputEvent], self._pump.items())

    def _pass_bytes(self) -> None:
        """Hand stdout and stderr on as the bytes envd sent, undecoded, to the callbacks and to a loop.

        Not public: `e2b sandbox exec` passes a command's output through exactly, binary or not
        UTF-8, and e2b 2.x has no such switch. Call it before the output is read; `stdout`,
        `stderr` and the result stay text.
        """
        self._decoder.pass_bytes = True

    async def _read(self) -> AsyncIterator[OutputEvent | BytesEvent]:
        try:
            async for event in self._events:
                for item in self._decoder.feed(event):
                    yield item
        except Exception:
            # What the decoders hold is output too, even when the stream broke.
            for item in self._decoder.flush():
                yield item
            raise
        if not self._decoder.ended:
            for item in self._decoder.flush():
                yield item

    async def _deliver(self, item: OutputEvent | BytesEvent) -> None:
        stdout, stderr, pty = item
        if stdout is not None:
            await call_handler(self._on_stdout, stdout)
        elif stderr is not None:
            await call_handler(self._on_stderr, stderr)
        elif pty is not None:
            await call_handler(self._on_pty, pty)

    async def wait(
        self,
        on_pty: Callable[[PtyOutput], object] | None = None,
        on_stdout: Callable[[Stdout], object] | None = None,
        on_stderr: Callable[[Stderr], object] | None = None,
    ) -> CommandResult[OutputT]:
        """Until the command ends; its result, or `CommandExitException` when it exited with another status than 0.

        Callbacks given here get the output not read yet, when the handle had none.
        """
        self._on_pty = self._on_pty or on_pty
        self._on_stdout = self._on_stdout or on_stdout
        self._on_stderr = self._on_stderr or on_stderr
        await self._pump.run(callbacks=bool(self._on_stdout or self._on_stderr or self._on_pty))
        return self._decoder.result()

    async def disconnect(self) -> None:
        """Stop reading the output; the command goes on running (`commands.connect(pid)` reads it again)."""
        await self._pump.stop()
        if self._close_stream is not None:
            await self._close_stream()

    async def kill(self) -> bool:
        """Kill the command with SIGKILL; False when it was no longer running."""
        return await self._handle_kill()

    async def send_stdin(self, data: str | bytes, request_timeout: float | None = None) -> None:
        """Write `data` to the command's standard input (started with `stdin=True`)."""
        if self._handle_send_stdin is None:
            raise SandboxException("this handle cannot send input: use the terminal's send_stdin")
        await self._handle_send_stdin(data, request_timeout)

    async def close_stdin(self, request_timeout: float | None = None) -> None:
        """Close the command's standard input (end of file)."""
        if self._handle_close_stdin is None:
            raise SandboxException("this handle cannot close its input")
        await self._handle_close_stdin(request_timeout)
