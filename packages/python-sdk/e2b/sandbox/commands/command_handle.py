"""A command's result, its exit exception, a terminal's size, and the decoding of its event stream.

`OutputDecoder` turns the Start/Connect stream's events into text as they
arrive: stdout and stderr each through an incremental UTF-8 decoder, so a
character split across two chunks comes out whole (bytes that are not UTF-8
become U+FFFD), and a terminal's bytes untouched. It keeps the text only when
asked to (`retain_output`), so a command printing a gigabyte to an
`on_stdout` callback is never held in memory by the SDK. Set to `pass_bytes`,
it hands stdout and stderr on as envd's bytes instead (the CLI's `exec`).
"""

from __future__ import annotations

import codecs
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeAlias, TypeVar

from e2b._exceptions import SandboxException, UnexpectedResponseException

__all__ = [
    "CommandExitException",
    "CommandResult",
    "OutputDecoder",
    "PtyOutput",
    "PtySize",
    "Stderr",
    "Stdout",
]

Stdout: TypeAlias = str
"""A piece of a command's standard output."""
Stderr: TypeAlias = str
"""A piece of a command's standard error."""
PtyOutput: TypeAlias = bytes
"""A piece of a terminal's output, as the terminal wrote it."""

OutputT = TypeVar("OutputT", str, str | None, None)


@dataclass
class PtySize:
    """A terminal's size in character cells."""

    rows: int
    """Rows (lines)."""
    cols: int
    """Columns."""


@dataclass
class CommandResult(Generic[OutputT]):
    """How a command ended and what it printed (None when started with `retain_output=False`)."""

    stderr: OutputT
    """Everything the command wrote to standard error."""
    stdout: OutputT
    """Everything the command wrote to standard output."""
    exit_code: int
    """Its exit status; 0 means success."""
    error: str | None
    """envd's reason when the process did not end normally (a signal), else None."""


class CommandExitException(SandboxException, CommandResult[Any]):
    """The command exited with a status other than 0; it carries the whole `CommandResult`."""

    def __init__(self, *, stderr: str | None, stdout: str | None, exit_code: int, error: str | None) -> None:
        CommandResult.__init__(self, stderr=stderr, stdout=stdout, exit_code=exit_code, error=error)
        SandboxException.__init__(self, self._message())

    def _message(self) -> str:
        if self.stderr is None:
            return f"Command exited with code {self.exit_code}"
        return f"Command exited with code {self.exit_code} and error:\n{self.stderr}"

    def __str__(self) -> str:
        """The exit code and, when there was any, what the command wrote to standard error."""
        return self._message()


# One decoded piece of output: exactly one of the three is set.
OutputEvent: TypeAlias = tuple[Stdout | None, Stderr | None, PtyOutput | None]
# The same piece as envd sent it, from a decoder set to `pass_bytes`.
BytesEvent: TypeAlias = tuple[bytes | None, bytes | None, PtyOutput | None]


def _oneof(message: object, name: str) -> tuple[str | None, Any]:
    """The field set in the oneof `name` of a generated message, and its value."""
    chosen = getattr(message, name, None) if message is not None else None
    if chosen is None:
        return None, None
    return getattr(chosen, "field", None), getattr(chosen, "value", None)


def start_pid(response: object, action: str) -> int:
    """The pid in the first event of a Start or Connect stream; anything else is not envd's answer."""
    field, value = _oneof(getattr(response, "event", None), "event")
    pid = getattr(value, "pid", None)
    if field != "start" or not isinstance(pid, int) or isinstance(pid, bool):
        raise UnexpectedResponseException(f"could not {action}: envd's first event is not the process's start")
    return pid


class OutputDecoder:
    """The state of one command's output stream: decoders, what was kept, and how it ended."""

    def __init__(self, retain_output: bool = True) -> None:
        self._stdout: list[str] | None = [] if retain_output else None
        self._stderr: list[str] | None = [] if retain_output else None
        self._out = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._err = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.exit_code: int | None = None
        self.error: str | None = None
        self.ended = False
        # Not public (e2b 2.x has no such switch): `e2b sandbox exec` must write a command's output
        # byte for byte, and a decoded chunk cannot be turned back into the bytes it came from (U+FFFD).
        self.pass_bytes = False

    @property
    def stdout(self) -> str | None:
        return None if self._stdout is None else "".join(self._stdout)

    @property
    def stderr(self) -> str | None:
        return None if self._stderr is None else "".join(self._stderr)

    def _text(self, text: str, kept: list[str] | None, stderr: bool) -> list[OutputEvent]:
        if not text:
            return []
        if kept is not None:
            kept.append(text)
        return [(None, text, None)] if stderr else [(text, None, None)]

    def _bytes(
        self, chunk: bytes, decoder: codecs.IncrementalDecoder, kept: list[str] | None, stderr: bool
    ) -> list[BytesEvent]:
        if kept is not None:  # what is kept for `stdout`/`stderr` stays text, as their types say
            self._text(decoder.decode(chunk), kept, stderr)
        if not chunk:
            return []
        return [(None, chunk, None)] if stderr else [(chunk, None, None)]

    def feed(self, response: object) -> Sequence[OutputEvent | BytesEvent]:
        """The output in one Start/Connect response; an end event records the exit and flushes."""
        field, value = _oneof(getattr(response, "event", None), "event")
        if field == "data":
            kind, chunk = _oneof(value, "output")
            if not isinstance(chunk, bytes | bytearray):
                return []
            if kind in ("stdout", "stderr") and self.pass_bytes:
                stderr = kind == "stderr"
                decoder, kept = (self._err, self._stderr) if stderr else (self._out, self._stdout)
                return self._bytes(bytes(chunk), decoder, kept, stderr)
            if kind == "stdout":
                return self._text(self._out.decode(chunk), self._stdout, stderr=False)
            if kind == "stderr":
                return self._text(self._err.decode(chunk), self._stderr, stderr=True)
            if kind == "pty":
                return [(None, None, bytes(chunk))]
            return []
        if field == "end":
            flushed = self.flush()
            exit_code = getattr(value, "exit_code", None)
            self.exit_code = exit_code if isinstance(exit_code, int) and not isinstance(exit_code, bool) else -1
            has_field = getattr(value, "has_field", None)
            error = getattr(value, "error", None)
            self.error = error if has_field is not None and has_field("error") and isinstance(error, str) else None
            self.ended = True
            return flushed
        return []  # start (on connect), keep-alive, or a kind this SDK does not know

    def flush(self) -> list[OutputEvent]:
        """What the decoders still hold (an unfinished character becomes U+FFFD)."""
        held = [
            *self._text(self._out.decode(b"", final=True), self._stdout, stderr=False),
            *self._text(self._err.decode(b"", final=True), self._stderr, stderr=True),
        ]
        # Passing bytes, every byte was handed on as it came: what the decoders held is only kept.
        return [] if self.pass_bytes else held

    def result(self) -> CommandResult[Any]:
        """The command's result; a non-zero exit raises `CommandExitException`."""
        if not self.ended or self.exit_code is None:
            raise SandboxException("the command's stream ended before the command did: its exit status is unknown")
        if self.exit_code != 0:
            raise CommandExitException(
                stdout=self.stdout, stderr=self.stderr, exit_code=self.exit_code, error=self.error
            )
        return CommandResult(stdout=self.stdout, stderr=self.stderr, exit_code=self.exit_code, error=self.error)
