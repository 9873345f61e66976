"""One running command's input (runtime/processes.py): writes that meet a full pipe, and its close.

The pipe is filled for real: the reader (`cat`) is stopped until every write
waits for room, so that they wait at once, the case where their wake-ups used
to replace one another's.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from pathlib import Path

import pytest
from e2b_local_api.runtime.processes import ManagedProcess

DEADLINE = 10.0  # bounds a failure only: a write never woken would otherwise wait out the 30 s input limit
PART = 300 << 10  # each write larger than a pipe holds (64 KiB)


def managed(pid: int, stdin: int) -> ManagedProcess:
    return ManagedProcess(pid, config=None, tag=None, outputs={}, stdin=stdin, pty=None, on_done=lambda _: None)


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
