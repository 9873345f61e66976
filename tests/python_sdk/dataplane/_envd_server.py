"""A small envd for the data-plane tests: the generated Connect services over real processes and real files.

uvicorn serves it on 127.0.0.1 (a free port) in a thread of the test
process. Processes are real subprocesses (pipes, or a real pseudo-terminal);
files are the host's own, so tests pass paths under their tmp dir. `Faults`
makes it misbehave on purpose: an error code for a method, a dropped stream,
garbage instead of a stream, a /health answer; `starts` counts Start calls.
"""

# The generated messages type a oneof by its field's literal name and their sub-messages as
# optional: this glue builds and reads them freely, and the SDK's own code is what is checked.
# mypy: disable-error-code="arg-type,union-attr"

from __future__ import annotations

import asyncio
import contextlib
import grp
import gzip
import json
import os
import pty
import pwd
import shutil
import signal
import socket
import stat
import struct
import tempfile
import termios
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import uvicorn
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from e2b.envd.filesystem import filesystem_pb
from e2b.envd.filesystem.filesystem_connect import Filesystem, FilesystemASGIApplication
from e2b.envd.process import process_pb
from e2b.envd.process.process_connect import Process, ProcessASGIApplication
from protobuf import Oneof
from protobuf.wkt import Timestamp

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

# How soon a call interrupted by Ctrl-C must have ended: well below anything it could be waiting for
# instead (the command's own 60 s, the 30 s request timeout), so a wrong wait fails, and far above the
# tenths of a second it takes on a quiet machine, so a loaded one does not (the suite ran at load 7,
# where 1.45 s was seen). How soon it ends is a figure, not a test.
PROMPTLY = 10.0
USER_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@dataclass
class Faults:
    """What the server does wrong, and what it saw."""

    errors: dict[str, tuple[Any, str]] = field(default_factory=dict)  # method -> (Connect code or, for files, status)
    error_times: dict[str, int] = field(default_factory=dict)  # how many calls get it (absent: all)
    drop_after_start: bool = False  # Start: send the start event, then drop the connection
    garbage_stream: bool = False  # Start: answer 200 with bytes that are no Connect envelope
    health: tuple[int, bytes] | None = None  # /health's answer instead of 204
    slow_start: float = 0.0  # Start: seconds before the start event
    stall_download: bool = False  # GET /files: the first chunk, then nothing for a minute
    cut_download: bool = False  # GET /files: the first chunk, then the connection ends (a paused sandbox's)
    starts: int = 0
    calls: dict[str, int] = field(default_factory=dict)
    headers: dict[str, dict[str, str]] = field(default_factory=dict)  # the last request's headers, by method

    def check(self, method: str, headers: Any = None) -> None:
        self.calls[method] = self.calls.get(method, 0) + 1
        if headers is not None:
            self.headers[method] = {k.lower(): v for k, v in headers.items()}
        if method in self.errors:
            left = self.error_times.get(method)
            if left is None or left > 0:
                if left is not None:
                    self.error_times[method] = left - 1
                code, message = self.errors[method]
                raise ConnectError(code, message)


def _event(**kind: Any) -> process_pb.ProcessEvent:
    ((name, value),) = kind.items()
    return process_pb.ProcessEvent(event=Oneof(name, value))


class _Proc:
    """A running process and the queues of those reading its events."""

    def __init__(self, process: asyncio.subprocess.Process, config: process_pb.ProcessConfig, master: int | None):
        self.process = process
        self.config = config
        self.master = master
        self.readers: list[asyncio.Queue[process_pb.ProcessEvent | None]] = []
        self.done = False
        self.pump: asyncio.Future[None] | None = None

    def publish(self, event: process_pb.ProcessEvent | None) -> None:
        for queue in self.readers:
            queue.put_nowait(event)


class ProcessService(Process):
    def __init__(self, faults: Faults) -> None:
        self.faults = faults
        self.procs: dict[int, _Proc] = {}
        self.inputs: list[str] = []  # the kinds of StreamInput events received, in order
        self.home = tempfile.TemporaryDirectory(prefix="envd-home-")  # an empty HOME: no profile in it

    def _proc(self, selector: process_pb.ProcessSelector | None) -> _Proc:
        pid = selector.selector.value if selector is not None and selector.selector is not None else None
        proc = self.procs.get(pid) if isinstance(pid, int) else None
        if proc is None or proc.done:
            raise ConnectError(Code.NOT_FOUND, f"process with pid {pid} not found")
        return proc

    async def _spawn(self, request: process_pb.StartRequest) -> _Proc:
        config = request.process
        cwd = config.cwd if config.has_field("cwd") else None
        if cwd is not None and not os.path.isdir(cwd):
            raise ConnectError(Code.INVALID_ARGUMENT, f"cwd '{cwd}' does not exist")
        # A sandbox user's environment, not this test process's: `bash -l` reads HOME's profile, and
        # the host's (on CI machines, pyenv's rehash behind a machine-wide lock) is no part of a test.
        env = {"PATH": USER_PATH, "HOME": self.home.name, "LANG": "C.UTF-8", **dict(config.envs)}
        if request.pty is not None:
            master, slave = pty.openpty()
            size = request.pty.size
            if size is not None:
                fcntl_size = struct.pack("HHHH", size.rows, size.cols, 0, 0)
                import fcntl

                fcntl.ioctl(slave, termios.TIOCSWINSZ, fcntl_size)
            process = await asyncio.create_subprocess_exec(
                config.cmd,
                *config.args,
                stdin=slave,
                stdout=slave,
                stderr=slave,
                cwd=cwd,
                env=env,
                start_new_session=True,
            )
            os.close(slave)
            proc = _Proc(process, config, master)
        else:
            process = await asyncio.create_subprocess_exec(
                config.cmd,
                *config.args,
                stdin=asyncio.subprocess.PIPE if request.stdin else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=cwd,
                env=env,
                start_new_session=True,
            )
            proc = _Proc(process, config, None)
        self.procs[process.pid] = proc
        return proc

    async def _pump(self, proc: _Proc) -> None:
        async def pipe(stream: asyncio.StreamReader | None, kind: str) -> None:
            while stream is not None:
                chunk = await stream.read(65536)
                if not chunk:
                    return
                data = process_pb.ProcessEvent.DataEvent(output=Oneof(kind, chunk))
                proc.publish(_event(data=data))

        async def terminal(master: int) -> None:
            loop = asyncio.get_running_loop()
            while True:
                try:
                    chunk = await loop.run_in_executor(None, os.read, master, 65536)
                except OSError:
                    return
                if not chunk:
                    return
                proc.publish(_event(data=process_pb.ProcessEvent.DataEvent(output=Oneof("pty", chunk))))

        if proc.master is not None:
            reader = asyncio.ensure_future(terminal(proc.master))
            code = await proc.process.wait()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(reader, 2)
            os.close(proc.master)
        else:
            await asyncio.gather(pipe(proc.process.stdout, "stdout"), pipe(proc.process.stderr, "stderr"))
            code = await proc.process.wait()
        proc.done = True
        end = process_pb.ProcessEvent.EndEvent(exit_code=code if code >= 0 else -1, exited=code >= 0, status="exit")
        if code < 0:
            end = process_pb.ProcessEvent.EndEvent(
                exit_code=-1, exited=False, status=f"signal: {-code}", error=f"signal: {signal.Signals(-code).name}"
            )
        proc.publish(_event(end=end))
        proc.publish(None)

    async def _events(self, proc: _Proc, queue: asyncio.Queue[Any], wrap: type, ctx: Any) -> AsyncIterator[Any]:
        # envd ends a stream at its Connect-Timeout-Ms deadline, and kills the process it started.
        deadline = None if ctx.timeout_ms is None else time.monotonic() + ctx.timeout_ms / 1000
        while True:
            try:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                event = await asyncio.wait_for(queue.get(), left)
            except TimeoutError:
                raise ConnectError(Code.DEADLINE_EXCEEDED, "the stream's deadline passed") from None
            if event is None:
                return
            yield wrap(event=event)

    async def start(self, request: process_pb.StartRequest, ctx: Any) -> AsyncIterator[process_pb.StartResponse]:
        self.faults.starts += 1
        self.faults.check("Start", ctx.request_headers)
        await asyncio.sleep(self.faults.slow_start)
        proc = await self._spawn(request)
        queue: asyncio.Queue[Any] = asyncio.Queue()
        proc.readers.append(queue)
        proc.pump = asyncio.ensure_future(self._pump(proc))  # kept: a task nobody holds may be collected
        yield process_pb.StartResponse(event=_event(start=process_pb.ProcessEvent.StartEvent(pid=proc.process.pid)))
        async for item in self._events(proc, queue, process_pb.StartResponse, ctx):
            yield item

    async def connect(self, request: process_pb.ConnectRequest, ctx: Any) -> AsyncIterator[process_pb.ConnectResponse]:
        self.faults.check("Connect", ctx.request_headers)
        proc = self._proc(request.process)
        queue: asyncio.Queue[Any] = asyncio.Queue()
        proc.readers.append(queue)
        pid = proc.process.pid
        yield process_pb.ConnectResponse(event=_event(start=process_pb.ProcessEvent.StartEvent(pid=pid)))
        async for item in self._events(proc, queue, process_pb.ConnectResponse, ctx):
            yield item

    async def list(self, request: process_pb.ListRequest, ctx: Any) -> process_pb.ListResponse:
        self.faults.check("List", ctx.request_headers)
        return process_pb.ListResponse(
            processes=[
                process_pb.ProcessInfo(pid=pid, config=proc.config) for pid, proc in self.procs.items() if not proc.done
            ]
        )

    async def update(self, request: process_pb.UpdateRequest, ctx: Any) -> process_pb.UpdateResponse:
        self.faults.check("Update", ctx.request_headers)
        proc = self._proc(request.process)
        if proc.master is not None and request.pty is not None and request.pty.size is not None:
            import fcntl

            size = request.pty.size
            fcntl.ioctl(proc.master, termios.TIOCSWINSZ, struct.pack("HHHH", size.rows, size.cols, 0, 0))
        return process_pb.UpdateResponse()

    async def send_input(self, request: process_pb.SendInputRequest, ctx: Any) -> process_pb.SendInputResponse:
        self.faults.check("SendInput", ctx.request_headers)
        proc = self._proc(request.process)
        chosen = request.input.input if request.input is not None else None
        await self._write(proc, chosen.value if chosen is not None else b"")
        return process_pb.SendInputResponse()

    async def stream_input(self, request: Any, ctx: Any) -> process_pb.StreamInputResponse:
        self.faults.check("StreamInput", ctx.request_headers)
        proc: _Proc | None = None
        async for message in request:
            chosen = message.event
            if chosen is None:
                continue
            if chosen.field == "start":
                proc = self._proc(chosen.value.process)
            elif chosen.field == "data":
                if proc is None:
                    raise ConnectError(Code.FAILED_PRECONDITION, "data before the start event")
                await self._write(proc, chosen.value.input.input.value)
            self.inputs.append(chosen.field)
        return process_pb.StreamInputResponse()

    async def _write(self, proc: _Proc, data: bytes) -> None:
        if proc.master is not None:
            os.write(proc.master, data)
        elif proc.process.stdin is not None:
            proc.process.stdin.write(data)
            await proc.process.stdin.drain()

    async def close_stdin(self, request: process_pb.CloseStdinRequest, ctx: Any) -> process_pb.CloseStdinResponse:
        self.faults.check("CloseStdin", ctx.request_headers)
        proc = self._proc(request.process)
        if proc.process.stdin is not None:
            proc.process.stdin.close()
        return process_pb.CloseStdinResponse()

    async def send_signal(self, request: process_pb.SendSignalRequest, ctx: Any) -> process_pb.SendSignalResponse:
        self.faults.check("SendSignal", ctx.request_headers)
        proc = self._proc(request.process)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.process.pid, int(request.signal))
        return process_pb.SendSignalResponse()


def entry(path: str) -> filesystem_pb.EntryInfo:
    info = os.lstat(path)
    is_link = stat.S_ISLNK(info.st_mode)
    target = os.stat(path) if is_link else info
    kind = filesystem_pb.FileType.DIRECTORY if stat.S_ISDIR(target.st_mode) else filesystem_pb.FileType.FILE
    message = filesystem_pb.EntryInfo(
        name=os.path.basename(path),
        type=kind,
        path=path,
        size=info.st_size,
        mode=info.st_mode & 0o7777,
        permissions=stat.filemode(info.st_mode),
        owner=pwd.getpwuid(info.st_uid).pw_name,
        group=grp.getgrgid(info.st_gid).gr_name,
        modified_time=Timestamp.from_seconds(int(info.st_mtime)),
        is_symlink=is_link,
    )
    if is_link:
        message.symlink_target = os.path.realpath(path)
    metadata = METADATA.get(path)
    if metadata:
        message.metadata = dict(metadata)
    return message


# Metadata written with files, by path (what envd keeps in extended attributes).
METADATA: dict[str, dict[str, str]] = {}


def _exists(path: str) -> None:
    if not os.path.lexists(path):
        raise ConnectError(Code.NOT_FOUND, f"no such file or directory: {path}")


class FilesystemService(Filesystem):
    def __init__(self, faults: Faults) -> None:
        self.faults = faults
        self.watchers: dict[str, tuple[Any, dict[str, int]]] = {}

    async def stat(self, request: filesystem_pb.StatRequest, ctx: Any) -> filesystem_pb.StatResponse:
        self.faults.check("Stat", ctx.request_headers)
        _exists(request.path)
        return filesystem_pb.StatResponse(entry=entry(request.path))

    async def list_dir(self, request: filesystem_pb.ListDirRequest, ctx: Any) -> filesystem_pb.ListDirResponse:
        self.faults.check("ListDir", ctx.request_headers)
        _exists(request.path)
        if not os.path.isdir(request.path):
            raise ConnectError(Code.INVALID_ARGUMENT, f"{request.path} is not a directory")
        entries = []
        depth = request.depth or 1
        base = request.path.rstrip("/") or "/"
        for root, dirs, files in os.walk(base):
            level = root[len(base) :].count("/") + 1
            for name in sorted(dirs + files):
                entries.append(entry(os.path.join(root, name)))
            if level >= depth:
                dirs[:] = []
        return filesystem_pb.ListDirResponse(entries=entries)

    async def make_dir(self, request: filesystem_pb.MakeDirRequest, ctx: Any) -> filesystem_pb.MakeDirResponse:
        self.faults.check("MakeDir", ctx.request_headers)
        if os.path.exists(request.path):
            raise ConnectError(Code.ALREADY_EXISTS, f"{request.path} already exists")
        os.makedirs(request.path)
        return filesystem_pb.MakeDirResponse(entry=entry(request.path))

    async def move(self, request: filesystem_pb.MoveRequest, ctx: Any) -> filesystem_pb.MoveResponse:
        self.faults.check("Move", ctx.request_headers)
        _exists(request.source)
        os.replace(request.source, request.destination)
        return filesystem_pb.MoveResponse(entry=entry(request.destination))

    async def remove(self, request: filesystem_pb.RemoveRequest, ctx: Any) -> filesystem_pb.RemoveResponse:
        self.faults.check("Remove", ctx.request_headers)
        _exists(request.path)
        if os.path.isdir(request.path) and not os.path.islink(request.path):
            shutil.rmtree(request.path)
        else:
            os.remove(request.path)
        return filesystem_pb.RemoveResponse()

    @staticmethod
    def _snapshot(path: str, recursive: bool) -> dict[str, int]:
        found = {}
        for root, dirs, files in os.walk(path):
            for name in dirs + files:
                full = os.path.join(root, name)
                with contextlib.suppress(OSError):
                    found[os.path.relpath(full, path)] = os.lstat(full).st_mtime_ns
            if not recursive:
                dirs[:] = []
        return found

    @staticmethod
    def _changes(
        path: str, before: dict[str, int], now: dict[str, int], include_entry: bool
    ) -> list[filesystem_pb.FilesystemEvent]:
        changes = [(n, filesystem_pb.EventType.CREATE) for n in now if n not in before]
        changes += [(n, filesystem_pb.EventType.WRITE) for n in now if n in before and now[n] != before[n]]
        changes += [(n, filesystem_pb.EventType.REMOVE) for n in before if n not in now]
        events = []
        for name, kind in changes:
            full = os.path.join(path, name)
            info = entry(full) if include_entry and os.path.lexists(full) else None
            events.append(filesystem_pb.FilesystemEvent(name=name, type=kind, entry=info))
        return events

    @staticmethod
    def _folder(path: str) -> None:
        _exists(path)
        if not os.path.isdir(path):
            raise ConnectError(Code.INVALID_ARGUMENT, f"{path} is not a directory")

    async def watch_dir(
        self, request: filesystem_pb.WatchDirRequest, ctx: Any
    ) -> AsyncIterator[filesystem_pb.WatchDirResponse]:
        self.faults.check("WatchDir", ctx.request_headers)
        self._folder(request.path)
        # Watching starts before the client hears so: a change right after is seen.
        before = self._snapshot(request.path, request.recursive)
        yield filesystem_pb.WatchDirResponse(event=Oneof("start", filesystem_pb.WatchDirResponse.StartEvent()))
        while True:
            await asyncio.sleep(0.02)
            now = self._snapshot(request.path, request.recursive)
            for event in self._changes(request.path, before, now, request.include_entry):
                yield filesystem_pb.WatchDirResponse(event=Oneof("filesystem", event))
            before = now

    async def create_watcher(self, request: Any, ctx: Any) -> Any:
        self.faults.check("CreateWatcher", ctx.request_headers)
        self._folder(request.path)
        watcher_id = f"w{len(self.watchers) + 1}"
        self.watchers[watcher_id] = (request, self._snapshot(request.path, request.recursive))
        return filesystem_pb.CreateWatcherResponse(watcher_id=watcher_id)

    async def get_watcher_events(self, request: Any, ctx: Any) -> Any:
        self.faults.check("GetWatcherEvents", ctx.request_headers)
        if request.watcher_id not in self.watchers:
            raise ConnectError(Code.NOT_FOUND, f"watcher {request.watcher_id} not found")
        created, before = self.watchers[request.watcher_id]
        now = self._snapshot(created.path, created.recursive)
        self.watchers[request.watcher_id] = (created, now)
        return filesystem_pb.GetWatcherEventsResponse(
            events=self._changes(created.path, before, now, created.include_entry)
        )

    async def remove_watcher(self, request: Any, ctx: Any) -> Any:
        self.faults.check("RemoveWatcher", ctx.request_headers)
        self.watchers.pop(request.watcher_id, None)
        return filesystem_pb.RemoveWatcherResponse()


async def _body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


async def _answer(send: Send, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
    raw = [(k.lower().encode(), v.encode()) for k, v in {"content-type": "application/json", **(headers or {})}.items()]
    raw.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


def _error(status: int, message: str) -> bytes:
    return json.dumps({"code": status, "message": message}).encode()


class _Dropped(Exception):
    """Raised out of the app to break a response's connection."""


class EnvdApp:
    """The ASGI app: Connect services by path prefix, /files and /health by hand."""

    def __init__(self) -> None:
        self.faults = Faults()
        self.process = ProcessService(self.faults)
        self.filesystem = FilesystemService(self.faults)
        self._process_app = ProcessASGIApplication(self.process)
        self._filesystem_app = FilesystemASGIApplication(self.filesystem)
        self.requests: list[tuple[str, str, dict[str, str]]] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        path = scope["path"]
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        self.requests.append((scope["method"], path, headers))
        if path.startswith("/process.Process/"):
            if path.endswith("/Start") and self.faults.garbage_stream:
                self.faults.starts += 1
                await _body(receive)
                await _answer(
                    send,
                    200,
                    b"\xff\x00garbage that is no envelope" * 10,
                    {"content-type": "application/connect+proto"},
                )
                return
            if path.endswith("/Start") and self.faults.drop_after_start:
                await self._dropping(scope, receive, send)
                return
            await self._process_app(scope, receive, send)
        elif path.startswith("/filesystem.Filesystem/"):
            await self._filesystem_app(scope, receive, send)
        elif path == "/health":
            status, body = self.faults.health or (204, b"")
            await _answer(send, status, body, {"content-type": "text/plain"})
        elif path == "/files":
            await self._files(scope, receive, send, headers)
        else:
            await _answer(send, 404, _error(404, "no such route"))

    async def _dropping(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Start as usual up to its first event, then the connection breaks: what a killed sandbox looks like."""
        bodies = 0

        async def send_then_drop(message: dict[str, Any]) -> None:
            nonlocal bodies
            if message["type"] == "http.response.body" and message.get("body"):
                bodies += 1
                if bodies > 1:
                    raise _Dropped
            await send(message)

        try:
            await self._process_app(scope, receive, send_then_drop)
        except _Dropped:
            pass
        # Leaving the app with the response unfinished makes uvicorn close the connection mid-body.
        raise _Dropped

    async def _files(self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str]) -> None:
        query = {k: v[0] for k, v in parse_qs(scope["query_string"].decode()).items()}
        if "files" in self.faults.errors:
            status, message = self.faults.errors["files"]  # an HTTP status here, not a Connect code
            await _answer(send, int(status), _error(int(status), message))
            return
        if scope["method"] == "GET":
            path = query.get("path", "")
            if not os.path.isfile(path):
                await _answer(send, 404, _error(404, f"path '{path}' does not exist"))
                return
            gz = "gzip" in headers.get("accept-encoding", "")
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"application/octet-stream")]
                    + ([(b"content-encoding", b"gzip")] if gz else []),
                }
            )
            with open(path, "rb") as file:
                data = file.read()
            body = gzip.compress(data) if gz else data
            if self.faults.stall_download or self.faults.cut_download:
                await send({"type": "http.response.body", "body": body[:10], "more_body": True})
                if self.faults.cut_download:
                    raise ConnectionAbortedError("the download is cut short")  # uvicorn closes the connection
                await asyncio.sleep(60)
            for start in range(0, len(body), 1 << 20):
                await send({"type": "http.response.body", "body": body[start : start + (1 << 20)], "more_body": True})
            await send({"type": "http.response.body", "body": b""})
            return
        metadata = {k[len("x-metadata-") :]: v for k, v in headers.items() if k.startswith("x-metadata-")}
        ctype = headers.get("content-type", "")
        written = []
        if ctype.startswith("multipart/form-data"):
            body = await _body(receive)
            form = BytesParser(policy=HTTP).parsebytes(f"content-type: {ctype}\r\n\r\n".encode() + body)
            parts = list(form.iter_parts())
            for part in parts:
                name = part.get_filename()
                target = query["path"] if "path" in query and len(parts) == 1 else name
                written.append(self._store(target, part.get_payload(decode=True) or b"", metadata))
        else:
            path = query.get("path", "")
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            with open(path, "wb") as file:
                decompressor = None
                if headers.get("content-encoding") == "gzip":
                    import zlib

                    decompressor = zlib.decompressobj(wbits=31)
                while True:
                    received = await receive()
                    chunk = received.get("body", b"")
                    file.write(decompressor.decompress(chunk) if decompressor else chunk)
                    if not received.get("more_body"):
                        break
            written.append(self._describe(path, metadata))
        await _answer(send, 200, json.dumps(written).encode())

    def _store(self, path: str, data: bytes, metadata: dict[str, str]) -> dict[str, Any]:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        Path(path).write_bytes(data)
        return self._describe(path, metadata)

    def _describe(self, path: str, metadata: dict[str, str]) -> dict[str, Any]:
        if metadata:
            METADATA[path] = metadata
        answer: dict[str, Any] = {"name": os.path.basename(path), "type": "file", "path": path}
        if metadata:
            answer["metadata"] = metadata
        return answer


class EnvdServer:
    """`EnvdApp` under uvicorn on 127.0.0.1, in a thread; `url` is its base URL."""

    def __init__(self) -> None:
        self.app = EnvdApp()
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self._socket = sock
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        config = uvicorn.Config(self.app, log_level="critical", lifespan="off", timeout_graceful_shutdown=1)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True)

    @property
    def faults(self) -> Faults:
        return self.app.faults

    def __enter__(self) -> EnvdServer:
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the test envd did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        for proc in self.app.process.procs.values():
            if not proc.done:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.process.pid, signal.SIGKILL)
        self._server.should_exit = True
        self._thread.join(10)
        self._socket.close()
        self.app.process.home.cleanup()
