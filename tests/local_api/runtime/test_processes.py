"""One running command (runtime/processes.py): writes that meet a full pipe, its input's close, its output's events.

The pipe is filled for real: the reader (`cat`) is stopped until every write
waits for room, so that they wait at once, the case where their wake-ups used
to replace one another's. Output is written by the test into real pipes, one
read at a time, and taken from a subscription as a stream handler takes it.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import signal
import subprocess
from pathlib import Path

import pytest
from e2b_local_api.runtime import processes
from e2b_local_api.runtime.processes import STD_CHUNK, WIDE_PIPE, ManagedProcess, Subscription

DEADLINE = 10.0  # bounds a failure only: a write never woken would otherwise wait out the 30 s input limit
PART = 300 << 10  # each write larger than a pipe holds (64 KiB)


def managed(pid: int, stdin: int | None = None, outputs: dict[int, processes.Stream] | None = None) -> ManagedProcess:
    return ManagedProcess(
        pid, config=None, tag=None, outputs=outputs or {}, stdin=stdin, pty=None, on_done=lambda _: None
    )


def test_concurrent_writes_to_one_stdin_each_arrive_whole_in_order_of_arrival(tmp_path: Path) -> None:
    parts = [letter * PART for letter in (b"a", b"b", b"c", b"d")]
    read_end, write_end = os.pipe()
    with (tmp_path / "out").open("wb") as sink:
        cat = subprocess.Popen(["cat"], stdin=read_end, stdout=sink)
    os.close(read_end)
    try:
        os.kill(cat.pid, signal.SIGSTOP)
        os.waitpid(cat.pid, os.WUNTRACED)  # stopped: it reads nothing until SIGCONT

        async def run() -> None:
            process = managed(cat.pid, write_end)
            writes = [asyncio.create_task(process.write_stdin(part)) for part in parts]
            await asyncio.sleep(0)  # each write runs until the full pipe stops it
            assert not any(write.done() for write in writes)
            os.kill(cat.pid, signal.SIGCONT)
            await asyncio.wait_for(asyncio.gather(*writes), DEADLINE)
            process.close_stdin()

        asyncio.run(run())
        assert cat.wait(DEADLINE) == 0
    finally:
        cat.kill()
        cat.wait()
    assert (tmp_path / "out").read_bytes() == b"".join(parts)


def test_closing_stdin_ends_the_writes_waiting_for_room() -> None:
    read_end, write_end = os.pipe()  # read by nobody: the first write fills it and waits

    async def run() -> None:
        process = managed(os.getpid(), write_end)
        waiting = asyncio.create_task(process.write_stdin(b"x" * PART))
        queued = asyncio.create_task(process.write_stdin(b"y" * PART))
        await asyncio.sleep(0)
        assert not waiting.done() and not queued.done()
        process.close_stdin()
        with pytest.raises(ValueError, match="closed while being written"):
            await asyncio.wait_for(waiting, DEADLINE)
        with pytest.raises(ValueError, match="stdin is not enabled or was closed"):
            await asyncio.wait_for(queued, DEADLINE)

    try:
        asyncio.run(run())
    finally:
        os.close(read_end)


def test_a_write_woken_then_closed_writes_nothing_more_to_the_fd_number() -> None:
    # A reader's exit makes the pipe writable (the wait is woken) and then the process's end closes its input,
    # before the writer runs on: the fd's number, soon another file's, must not get the rest of the input.
    read_end, write_end = os.pipe()
    other_read, other_write = os.pipe()
    os.set_blocking(other_read, False)
    os.set_blocking(other_write, False)  # as the process's own input is: a write never blocks the test

    async def run() -> None:
        process = managed(os.getpid(), write_end)
        writing = asyncio.create_task(process.write_stdin(b"x" * PART))
        await asyncio.sleep(0)
        assert process._input_wait is not None and not writing.done()
        process._input_wait[1].set_result(None)  # woken, as the loop's writer callback does
        process.close_stdin()
        os.dup2(other_write, write_end)  # the number is another pipe's now
        with pytest.raises(ValueError, match="closed while being written"):
            await asyncio.wait_for(writing, DEADLINE)

    try:
        asyncio.run(run())
        with pytest.raises(BlockingIOError):
            os.read(other_read, 1)  # nothing of the input reached the other pipe
    finally:
        for fd in (read_end, write_end, other_read, other_write):
            os.close(fd)


# --- output ----------------------------------------------------------------------------------------------------------


async def until_queued(subscription: Subscription, count: int) -> None:
    """Until `count` reads wait in the queue (the loop reads a pipe as soon as it holds something)."""

    async def queued() -> None:
        while len(subscription.queue) < count:
            await asyncio.sleep(0)

    await asyncio.wait_for(queued(), DEADLINE)


def written_one_read_at_a_time(parts: list[tuple[processes.Stream, bytes]]) -> list[object]:
    """The events a subscriber takes after `parts` were each read on their own and waited in its queue."""
    pipes = {name: os.pipe() for name in ("stdout", "stderr")}

    async def run() -> list[object]:
        process = managed(os.getpid(), outputs={pipes["stdout"][0]: "stdout", pipes["stderr"][0]: "stderr"})
        subscription = process.subscribe()
        for count, (name, part) in enumerate(parts, start=1):
            os.write(pipes[name][1], part)
            await until_queued(subscription, count)
        events: list[object] = []
        while subscription.queue:
            events.append(await subscription.next(DEADLINE))
        assert subscription.size == 0
        return events

    try:
        return asyncio.run(run())
    finally:
        for ends in pipes.values():
            for fd in ends:
                os.close(fd)


def test_reads_that_waited_go_out_as_one_event_per_stream_in_order() -> None:
    parts: list[tuple[processes.Stream, bytes]] = [
        ("stdout", b"a" * 1000),
        ("stdout", b"b" * 1000),
        ("stderr", b"E"),
        ("stdout", b"c"),
        ("stdout", b"d"),
    ]
    assert written_one_read_at_a_time(parts) == [
        ("stdout", b"a" * 1000 + b"b" * 1000),
        ("stderr", b"E"),
        ("stdout", b"cd"),
    ]


def test_an_event_carries_at_most_merge_up_to(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(processes, "MERGE_UP_TO", 2500)
    parts: list[tuple[processes.Stream, bytes]] = [("stdout", bytes([letter]) * 1000) for letter in b"abcd"]
    events = written_one_read_at_a_time(parts)
    assert events == [("stdout", b"a" * 1000 + b"b" * 1000), ("stdout", b"c" * 1000 + b"d" * 1000)]


def test_a_pipe_read_full_is_widened_an_idle_one_keeps_the_default() -> None:
    busy_read, busy_write = os.pipe()
    idle_read, idle_write = os.pipe()
    try:
        default = fcntl.fcntl(busy_read, fcntl.F_GETPIPE_SZ)
        assert STD_CHUNK < default < WIDE_PIPE  # the kernel's 64 KiB, which this relies on
        os.write(busy_write, b"x" * (STD_CHUNK + 1))  # more than one read takes: the writer is ahead
        os.write(idle_write, b"y" * 100)

        async def run() -> None:
            process = managed(os.getpid(), outputs={busy_read: "stdout", idle_read: "stderr"})
            await until_queued(process.subscribe(), 3)  # the busy pipe's two reads, the idle one's

        asyncio.run(run())
        assert fcntl.fcntl(busy_read, fcntl.F_GETPIPE_SZ) == WIDE_PIPE
        assert fcntl.fcntl(idle_read, fcntl.F_GETPIPE_SZ) == default
    finally:
        for fd in (busy_read, busy_write, idle_read, idle_write):
            os.close(fd)
