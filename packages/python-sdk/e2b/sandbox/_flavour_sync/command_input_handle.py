"""`stream_input`, sync: the hand-written twin of `e2b.sandbox._flavour_async.command_input_handle`.

As in e2b 2.x's `Sandbox`, one call sends every chunk of an iterable to the
process, in order, over one StreamInput call.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from e2b._exceptions import InvalidArgumentException
from e2b.envd.process import process_pb
from e2b.sandbox import arguments
from e2b.sandbox._flavour_sync import steps
from e2b.sandbox.commands.stream_input import STREAM_INPUT_TIMEOUT, InputKind, data_request, start_request

if TYPE_CHECKING:
    from e2b.sandbox_sync.envd_client import EnvdClient

__all__ = ["StreamingInput"]


class StreamingInput:
    """What `Commands` (stdin) and `Pty` (the terminal) inherit to stream input to a process."""

    _envd: EnvdClient
    _input_kind: InputKind

    def stream_input(
        self, pid: int, data: Iterable[str | bytes], *, timeout: float | None = STREAM_INPUT_TIMEOUT
    ) -> None:
        """Send every chunk of `data` (str as UTF-8) to the process `pid`, in order, in one call."""
        if isinstance(data, str | bytes | bytearray | memoryview):
            raise InvalidArgumentException("data must be an iterable of chunks: wrap one chunk in a list, [data]")
        pid = arguments.pid(pid)
        stream_timeout = arguments.stream_timeout("timeout", timeout)
        kind = self._input_kind

        def requests() -> Iterator[process_pb.StreamInputRequest]:
            yield start_request(pid)
            for chunk in data:
                yield data_request(kind, chunk)

        try:
            steps.call(
                self._envd.process.stream_input,
                requests(),
                headers=self._envd.stream_headers(stream_timeout=stream_timeout),
            )
        except Exception as error:
            raise self._envd.failure(error) from None
