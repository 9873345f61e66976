"""One running command: its output fanned out to subscribers, its input, its end.

Output is read as it comes and copied to each subscriber's queue (with nobody
subscribed it is dropped, as envd drops it); what waits in a queue goes out as
one event, so a client that falls behind catches up in fewer, larger messages.
Each queue is bounded: while one holds more than `HIGH_WATER` bytes
the process's output is not read (the process waits on its pipe, as with any
slow reader), and a subscriber that stays above it for `STALL_SECONDS` loses
its stream with a `resource_exhausted` error instead of holding the process
longer; the others go on.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import os
import struct
import termios
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from connectrpc.code import Code
from connectrpc.errors import ConnectError

from e2b_local_api.runtime.exits import Exit

HIGH_WATER = 4 << 20
LOW_WATER = 1 << 20
STALL_SECONDS = 30.0
# envd reads 32 KiB at a time, and so does this, until a read comes back full: the writer is ahead of its reader,
# so its pipe is widened and read 256 KiB at a time. With queued reads sent as one event, that took 1 GiB of stdout
# from 98-110 to 149-156 MiB/s (released SDK) and from 114-129 to 241-302 (this one): fewer events to encode, frame
# and decode (docs/maintainers/performance.md). Not for every pipe: a read of 256 KiB that finds a line costs 20 us
# more than one of 32 KiB (its buffer is mapped and unmapped), and an idle process keeps the kernel's 64 KiB pipe.
STD_CHUNK = 32 << 10
PTY_CHUNK = 16 << 10
WIDE_PIPE = 256 << 10  # a widened pipe's size and read (unprivileged: within fs.pipe-max-size, 1 MiB)
MERGE_UP_TO = 1 << 20  # the most one data event carries when queued reads are sent together
INPUT_SECONDS = 30.0  # a process that reads none of its input for this long fails the write

Stream = Literal["stdout", "stderr", "pty"]


@dataclass
class Subscription:
    """One stream's view of a process: the events since it subscribed, bounded in bytes."""

    process: ManagedProcess
    queue: deque[tuple[Stream, bytes] | Exit] = field(default_factory=deque)
    size: int = 0
    error: ConnectError | None = None
    wake: asyncio.Event = field(default_factory=asyncio.Event)

    def push(self, item: tuple[Stream, bytes] | Exit) -> None:
        self.queue.append(item)
        if not isinstance(item, Exit):
            self.size += len(item[1])
        self.wake.set()

    def fail(self, error: ConnectError) -> None:
        if self.error is None:
            self.error = error
        self.wake.set()

    async def next(self, timeout: float | None) -> tuple[Stream, bytes] | Exit | None:
        """The next event; None when `timeout` passed first. Raises the stream's error, once its events are out."""
        while True:
            if self.error is not None:
                raise self.error  # a pause, a kill or a stall ends the stream at once
            if self.queue:
                break
            self.wake.clear()
            try:
                await asyncio.wait_for(self.wake.wait(), timeout)
            except TimeoutError:
                return None
        item = self.queue.popleft()
        if isinstance(item, Exit):
            return item
        stream, data = item
        parts = [data]
        taken = len(data)
        while self.queue:  # the reads of the same stream that waited behind it, in order, up to MERGE_UP_TO
            follower = self.queue[0]
            if isinstance(follower, Exit) or follower[0] != stream or taken + len(follower[1]) > MERGE_UP_TO:
                break
            self.queue.popleft()
            parts.append(follower[1])
            taken += len(follower[1])
        self.size -= taken
        self.process.drained()
        return stream, data if len(parts) == 1 else b"".join(parts)


class ManagedProcess:
    def __init__(
        self,
        pid: int,
        *,
        config: object,
        tag: str | None,
        outputs: dict[int, Stream],
        stdin: int | None,
        pty: int | None,
        on_done: Callable[[ManagedProcess], None],
    ) -> None:
        self.pid = pid
        self.config = config  # the StartRequest's ProcessConfig, as List returns it
        self.tag = tag
        self.exit: Exit | None = None
        self._loop = asyncio.get_running_loop()
        self._outputs = dict(outputs)
        self._reading = False
        self._widened: set[int] = set()  # output pipes grown to WIDE_PIPE
        self._stdin = stdin
        self.pty = pty
        # asyncio keeps one writer callback per fd: a second waiter's add_writer would replace the first's (never
        # woken) and each remove_writer would drop the others'. So writes take turns, whole, in order of arrival.
        self._input_turn = asyncio.Lock()
        self._input_wait: tuple[int, asyncio.Future[None]] | None = None  # the turn's wait for room, if any
        self._input_moved = 0.0  # loop time of the last byte the process took of its input
        self._on_done = on_done
        self._subscribers: list[Subscription] = []
        self._pending_exit: Exit | None = None
        self._stall: asyncio.TimerHandle | None = None
        self.done = asyncio.Event()
        for fd in self._outputs:
            os.set_blocking(fd, False)
        if stdin is not None:
            os.set_blocking(stdin, False)
        self._resume_reading()

    # --- subscribers -----------------------------------------------------------------------------------------------

    @property
    def subscribers(self) -> int:
        return len(self._subscribers)

    def subscribe(self) -> Subscription:
        subscription = Subscription(self)
        if self.exit is not None:
            subscription.push(self.exit)
        else:
            self._subscribers.append(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        if subscription in self._subscribers:
            self._subscribers.remove(subscription)
            self.drained()

    def fail_streams(self, error: ConnectError) -> None:
        """End every open stream of this process with `error` (a pause, a kill); the process is untouched."""
        for subscription in self._subscribers:
            subscription.fail(error)
        self._subscribers.clear()
        self.drained()

    # --- output ----------------------------------------------------------------------------------------------------

    def _publish(self, item: tuple[Stream, bytes] | Exit) -> None:
        for subscription in self._subscribers:
            subscription.push(item)
        if not isinstance(item, Exit) and any(s.size > HIGH_WATER for s in self._subscribers):
            self._pause_reading()

    def _read(self, fd: int) -> None:
        stream = self._outputs[fd]
        size = PTY_CHUNK if stream == "pty" else WIDE_PIPE if fd in self._widened else STD_CHUNK
        try:
            data = os.read(fd, size)
        except BlockingIOError:
            return
        except OSError as error:
            if error.errno != errno.EIO:  # EIO: a terminal whose last process left
                raise
            data = b""
        if data:
            if size == STD_CHUNK and len(data) == size:
                self._widened.add(fd)
                with contextlib.suppress(OSError):  # over the user's pipe quota: the default pipe is kept
                    fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, WIDE_PIPE)
            if self._subscribers:
                self._publish((stream, data))
            return
        self._close_output(fd)

    def _close_output(self, fd: int) -> None:
        if self._reading:
            self._loop.remove_reader(fd)
        del self._outputs[fd]
        self._widened.discard(fd)
        if fd != self.pty:
            os.close(fd)
        self._maybe_end()

    def stop_output(self) -> None:
        """Stop reading output (envd does on SIGKILL and SIGTERM): the end follows the exit alone."""
        for fd in list(self._outputs):
            self._close_output(fd)

    def _pause_reading(self) -> None:
        if not self._reading:
            return
        self._reading = False
        for fd in self._outputs:
            self._loop.remove_reader(fd)
        self._stall = self._loop.call_later(STALL_SECONDS, self._drop_stalled)

    def _resume_reading(self) -> None:
        if self._reading:
            return
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None
        self._reading = True
        for fd in self._outputs:
            self._loop.add_reader(fd, self._read, fd)

    def drained(self) -> None:
        if not self._reading and all(s.size <= LOW_WATER for s in self._subscribers):
            self._resume_reading()

    def _drop_stalled(self) -> None:
        self._stall = None
        for subscription in [s for s in self._subscribers if s.size > HIGH_WATER]:
            self._subscribers.remove(subscription)
            subscription.fail(
                ConnectError(
                    Code.RESOURCE_EXHAUSTED,
                    f"the client read process {self.pid}'s output too slowly: more than {HIGH_WATER >> 20} MiB "
                    f"waited for over {STALL_SECONDS:g} s; the process goes on, connect again to follow it",
                )
            )
        self._resume_reading()

    # --- end -------------------------------------------------------------------------------------------------------

    def exited(self, exit: Exit) -> None:
        """The agent reaped the process; the end goes out once its output is read to the end."""
        self._pending_exit = exit
        self._maybe_end()

    def _maybe_end(self) -> None:
        if self._pending_exit is None or self._outputs or self.exit is not None:
            return
        self.exit = self._pending_exit
        self._publish(self.exit)
        self._subscribers.clear()
        self._release()
        self.done.set()
        self._on_done(self)

    def abandon(self) -> None:
        """The sandbox ended under the process: close everything, publish nothing."""
        if self._stall is not None:
            self._stall.cancel()
        for fd in list(self._outputs):
            if self._reading:
                self._loop.remove_reader(fd)
            if fd != self.pty:
                os.close(fd)
        self._outputs.clear()
        self._release()
        self.done.set()

    def _release(self) -> None:
        if self._stdin is not None:
            self._close_input(self._stdin)
            self._stdin = None
        if self.pty is not None:
            self._close_input(self.pty)
            self.pty = None

    # --- input -----------------------------------------------------------------------------------------------------

    async def write_stdin(self, data: bytes) -> None:
        arrived = self._loop.time()
        async with self._input_turn:
            if self.pty is not None:
                raise ValueError("a terminal is assigned to the process: send its input as pty input, not stdin")
            if self._stdin is None:  # looked at in turn: an earlier writer's wait may have outlived it
                raise ValueError("stdin is not enabled or was closed (start the process with stdin=True)")
            await self._write(self._stdin, data, arrived)

    async def write_pty(self, data: bytes) -> None:
        arrived = self._loop.time()
        async with self._input_turn:
            if self.pty is None:
                raise ValueError("no terminal is assigned to the process: send its input as stdin, not pty input")
            await self._write(self.pty, data, arrived)

    def close_stdin(self) -> None:
        if self.pty is not None:
            raise ValueError("the process has a terminal, whose input cannot be closed: send Ctrl-D (0x04) instead")
        if self._stdin is not None:
            self._close_input(self._stdin)
            self._stdin = None

    def resize(self, cols: int, rows: int) -> None:
        if self.pty is None:
            raise ValueError("no terminal is assigned to the process")
        fcntl.ioctl(self.pty, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

    async def _write(self, fd: int, data: bytes, arrived: float) -> None:
        """Write all of `data`; the caller holds `_input_turn`, so that one writer at a time waits on the fd."""
        view = memoryview(data)
        while view:
            try:
                written = os.write(fd, view)
            except BlockingIOError:
                written = 0
            except BrokenPipeError as error:
                raise ValueError(f"process {self.pid} does not read its input any more (it closed it)") from error
            if written:
                self._input_moved = self._loop.time()
            view = view[written:]
            if view:
                ready: asyncio.Future[None] = self._loop.create_future()
                self._input_wait = (fd, ready)
                self._loop.add_writer(fd, _settle, ready)
                # Measured from the last byte the process took, for any writer, or from this call if later: a
                # writer queued behind others fails only if the process stopped reading, not because it waited.
                deadline = max(self._input_moved, arrived) + INPUT_SECONDS
                try:
                    await asyncio.wait_for(ready, max(0.0, deadline - self._loop.time()))
                except TimeoutError as error:
                    raise ValueError(
                        f"process {self.pid} read none of its input for {INPUT_SECONDS:g} s; the rest was not written"
                    ) from error
                finally:
                    # Else the fd was closed under the wait, and `_close_input` ended the wait with it.
                    if self._input_wait is not None and self._input_wait[1] is ready:
                        self._input_wait = None
                        self._loop.remove_writer(fd)
                if fd != self._stdin and fd != self.pty:
                    # Woken (a reader's exit makes the pipe writable), then closed before this task ran on: the
                    # number may already be another file's, which must not get the rest of this input.
                    raise ValueError(f"the input of process {self.pid} was closed while being written")

    def _close_input(self, fd: int) -> None:
        """Close the input's fd, first ending a write's wait on it: the kernel drops a closed fd from epoll, so the
        wait would never be woken, and asyncio's record of it would outlive it onto the next fd of that number."""
        if self._input_wait is not None and self._input_wait[0] == fd:
            _, ready = self._input_wait
            self._input_wait = None
            self._loop.remove_writer(fd)
            if not ready.done():
                ready.set_exception(ValueError(f"the input of process {self.pid} was closed while being written"))
        os.close(fd)


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
