"""envd's Filesystem service (Connect), every path confined to the sandbox's root.

`filesystem_asgi_app(lookup)` serves `/filesystem.Filesystem/*`; each call
finds its sandbox with `lookup(headers)` (the router has checked the access
token already). The user a call acts as comes from `Authorization: Basic
<name>:` as envd reads it: relative paths start at that user's home and what
it creates is theirs. Slow calls (listing, removing a tree) run in a worker
thread so one sandbox's load does not stall another's calls.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import os
import secrets
import stat
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from connectrpc.code import Code
from connectrpc.errors import ConnectError
from protobuf import Oneof

from ..runtime.accounts import Account, Accounts, UnknownUser
from ..runtime.layout import MOUNT_POINTS
from ..runtime.paths import PathError, SandboxRoot, absolute, remove_tree
from ..runtime.watch import Change, Watch, WatchError, WatchLimit
from ..wire.envd.filesystem import filesystem_pb as pb
from ..wire.envd.filesystem.filesystem_connect import Filesystem, FilesystemASGIApplication
from .codecs import envd_codecs, envd_compressions
from .entries import entry_info
from .sandbox_view import Lookup, SandboxGone, SandboxView

# Watches (WatchDir streams and CreateWatcher watchers together) one sandbox may hold open.
MAX_WATCHES_PER_SANDBOX = 64
LANES_PER_SANDBOX = 2  # worker threads one sandbox's filesystem calls may hold at once
# Events a CreateWatcher watcher keeps between two polls.
MAX_PENDING_EVENTS = 10_000
DEFAULT_KEEPALIVE_SECONDS = 90
# Network filesystems, whose inotify events are late or missing (Linux magic numbers).
_NETWORK_FS = {0x6969, 0xFF534D42, 0x517B, 0xFE534D42, 0x65735546}

_KIND_TO_EVENT = {
    "create": pb.EventType.CREATE,
    "write": pb.EventType.WRITE,
    "remove": pb.EventType.REMOVE,
    "rename": pb.EventType.RENAME,
    "chmod": pb.EventType.CHMOD,
}
_CARRIES_ENTRY = {"create", "write", "chmod"}

T = TypeVar("T")


def _connect_error(error: PathError) -> ConnectError:
    return ConnectError(Code[error.kind.upper()], str(error))


@dataclass
class _Call:
    """One request's sandbox, user and confined root."""

    sandbox: SandboxView
    root: SandboxRoot
    accounts: Accounts
    user: Account

    def path(self, path: str) -> str:
        try:
            return absolute(path, self.user.home)
        except PathError as error:
            raise _connect_error(error) from None


@dataclass
class _Watcher:
    """A CreateWatcher watcher: its watch, the task filling its events, what it has collected."""

    sandbox_id: str
    watch: Watch
    task: asyncio.Task[None] | None = None
    events: list[pb.FilesystemEvent] = field(default_factory=list)
    error: ConnectError | None = None

    def close(self) -> None:
        if self.task is not None:
            self.task.cancel()
        self.watch.close()


def _username_from(headers: Mapping[str, str]) -> str | None:
    value = headers.get("authorization", "")
    scheme, _, credentials = value.partition(" ")
    if scheme.lower() != "basic" or not credentials:
        return None
    try:
        decoded = base64.b64decode(credentials, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise ConnectError(
            Code.UNAUTHENTICATED, "invalid Authorization header: expected Basic <base64 of 'user:'>"
        ) from None
    return decoded.partition(":")[0]


class FilesystemService(Filesystem):
    """The Filesystem protocol over the sandboxes `lookup` finds."""

    def __init__(self, lookup: Lookup) -> None:
        self._lookup = lookup
        self._watchers: dict[str, _Watcher] = {}
        self._held: dict[str, int] = {}  # sandbox id → watches it holds (streams and watchers)
        self._lanes: dict[str, asyncio.Semaphore] = {}  # sandbox id → its share of the worker threads

    # -- per call -------------------------------------------------------------------------

    def _call(self, ctx: Any) -> _Call:
        headers = ctx.request_headers
        try:
            sandbox = self._lookup(headers)
        except SandboxGone as gone:
            raise ConnectError(Code.UNAVAILABLE, str(gone)) from None
        root = SandboxRoot(sandbox.root)
        accounts = Accounts(root, sandbox.id_offset)
        name = _username_from(headers)
        try:
            user = accounts.user(name)
        except UnknownUser:
            raise ConnectError(Code.UNAUTHENTICATED, f"invalid username: '{name}'") from None
        return _Call(sandbox, root, accounts, user)

    async def _in_thread(self, call: _Call, work: Callable[[], T]) -> T:
        """`work` in a worker thread, holding one of its sandbox's lanes until the thread is done with it (a
        call given up by its client included): the worker threads are the whole server's, and one sandbox's
        slow calls (a red team's deep ListDirs) held them all while another sandbox's Stat waited 124 s."""
        lane = self._lanes.get(call.sandbox.sandbox_id)
        if lane is None:  # not setdefault: every call would make a semaphore to throw away
            lane = self._lanes[call.sandbox.sandbox_id] = asyncio.Semaphore(LANES_PER_SANDBOX)
        await lane.acquire()
        running = asyncio.ensure_future(asyncio.to_thread(work))
        running.add_done_callback(lambda done: _release(lane, done))
        try:
            return await asyncio.shield(running)
        except PathError as error:
            raise _connect_error(error) from None

    # -- unary calls ----------------------------------------------------------------------

    async def stat(self, request: pb.StatRequest, ctx: Any) -> pb.StatResponse:
        call = self._call(ctx)
        path = call.path(request.path)

        def work() -> pb.StatResponse:
            with call.root.resolve(path, follow=False) as found:
                real = found.path
            return pb.StatResponse(entry=entry_info(call.root, call.accounts, path, real))

        return await self._in_thread(call, work)

    async def list_dir(self, request: pb.ListDirRequest, ctx: Any) -> pb.ListDirResponse:
        call = self._call(ctx)
        path = call.path(request.path)
        depth = request.depth or 1

        def work() -> pb.ListDirResponse:
            with call.root.resolve(path, follow=True) as found:
                try:
                    st = os.stat(found.name, dir_fd=found.parent_fd, follow_symlinks=False)
                except FileNotFoundError:
                    raise PathError("not_found", f"path not found: '{path}' does not exist") from None
                if not stat.S_ISDIR(st.st_mode):
                    raise PathError("invalid_argument", f"path is not a directory: {path}")
                real = found.path
            entries: list[pb.EntryInfo] = []
            _walk(call, path, real, depth, entries)
            return pb.ListDirResponse(entries=entries)

        return await self._in_thread(call, work)

    async def make_dir(self, request: pb.MakeDirRequest, ctx: Any) -> pb.MakeDirResponse:
        call = self._call(ctx)
        path = call.path(request.path)
        owner = call.accounts.host_owner(call.user)

        def work() -> pb.MakeDirResponse:
            with call.root.resolve(path, follow=True, create_parents=owner) as found:
                try:
                    # Not followed: a link put there since the walk (which followed every one) would be
                    # followed from the host, and its answer say whether a host path is a folder.
                    st = os.stat(found.name, dir_fd=found.parent_fd, follow_symlinks=False)
                except FileNotFoundError:
                    st = None
                if st is not None:
                    if stat.S_ISDIR(st.st_mode):
                        raise PathError("already_exists", f"directory already exists: {path}")
                    raise PathError("invalid_argument", f"path already exists but it is not a directory: {path}")
                try:
                    os.mkdir(found.name, 0o755, dir_fd=found.parent_fd)
                except FileExistsError:
                    raise PathError("already_exists", f"directory already exists: {path}") from None
                _chown(found.parent_fd, found.name, owner)
                real = found.path
            return pb.MakeDirResponse(entry=entry_info(call.root, call.accounts, path, real))

        return await self._in_thread(call, work)

    async def move(self, request: pb.MoveRequest, ctx: Any) -> pb.MoveResponse:
        call = self._call(ctx)
        source, destination = call.path(request.source), call.path(request.destination)
        owner = call.accounts.host_owner(call.user)

        def work() -> pb.MoveResponse:
            try:
                src = call.root.resolve(source, follow=False)
            except PathError as error:
                if error.kind == "not_found":
                    raise PathError("not_found", f"source file not found: '{source}' does not exist") from None
                raise
            with src, call.root.resolve(destination, follow=False, create_parents=owner) as dst:
                if src.name == "." or dst.name == ".":
                    raise PathError("invalid_argument", "the sandbox's root folder cannot be moved or replaced")
                _refuse_mount_point(src.path, "moved")
                _refuse_mount_point(dst.path, "replaced")
                try:
                    os.rename(src.name, dst.name, src_dir_fd=src.parent_fd, dst_dir_fd=dst.parent_fd)
                except FileNotFoundError:
                    raise PathError("not_found", f"source file not found: '{source}' does not exist") from None
                except OSError as error:
                    raise PathError("internal", f"error renaming: {error.strerror}") from None
                real = dst.path
            return pb.MoveResponse(entry=entry_info(call.root, call.accounts, destination, real))

        return await self._in_thread(call, work)

    async def remove(self, request: pb.RemoveRequest, ctx: Any) -> pb.RemoveResponse:
        call = self._call(ctx)
        path = call.path(request.path)

        def work() -> pb.RemoveResponse:
            try:
                found = call.root.resolve(path, follow=False)
            except PathError as error:
                if error.kind == "not_found":
                    return pb.RemoveResponse()  # a missing path is already removed (envd's RemoveAll)
                raise
            with found:
                if found.name == ".":
                    raise PathError("invalid_argument", "the sandbox's root folder cannot be removed")
                _refuse_mount_point(found.path, "removed")
                try:
                    st = os.stat(found.name, dir_fd=found.parent_fd, follow_symlinks=False)
                except FileNotFoundError:
                    return pb.RemoveResponse()
                try:
                    if stat.S_ISDIR(st.st_mode):
                        remove_tree(found.parent_fd, found.name)
                    else:
                        os.unlink(found.name, dir_fd=found.parent_fd)
                except FileNotFoundError:
                    pass
                except OSError as error:
                    raise PathError("internal", f"error removing file or directory: {error}") from None
            return pb.RemoveResponse()

        return await self._in_thread(call, work)

    # -- watching -------------------------------------------------------------------------

    def _reserve(self, sandbox_id: str) -> None:
        """Take one of the sandbox's places for a watch, or refuse when it holds the most it may."""
        held = self._held.get(sandbox_id, 0)
        if held >= MAX_WATCHES_PER_SANDBOX:
            raise ConnectError(
                Code.RESOURCE_EXHAUSTED,
                f"the sandbox has {held} watches open, the most it may hold: stop a watch or remove a watcher first",
            )
        self._held[sandbox_id] = held + 1

    def _release(self, sandbox_id: str) -> None:
        self._held[sandbox_id] -= 1
        if not self._held[sandbox_id]:
            del self._held[sandbox_id]

    async def _start_watch(self, call: _Call, path: str, recursive: bool, allow_network_mounts: bool) -> Watch:
        """A place reserved, then the folder opened and watched in a worker (a big tree takes a while to walk)."""
        self._reserve(call.sandbox.sandbox_id)
        try:
            return await asyncio.to_thread(self._open_watch, call, path, recursive, allow_network_mounts)
        except BaseException:
            self._release(call.sandbox.sandbox_id)
            raise

    @staticmethod
    def _open_watch(call: _Call, path: str, recursive: bool, allow_network_mounts: bool) -> Watch:
        """Resolve `path` to a folder and watch it (through its descriptor: no link swapped in later is followed)."""
        try:
            with call.root.resolve(path, follow=True) as found:
                try:
                    fd = os.open(
                        found.name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=found.parent_fd
                    )
                except FileNotFoundError:
                    raise PathError("not_found", f"path {path} not found") from None
                except NotADirectoryError:
                    raise PathError("invalid_argument", f"path {path} not a directory") from None
                except OSError as error:
                    raise PathError("invalid_argument", f"path {path} cannot be watched: {error.strerror}") from None
        except PathError as error:
            raise _connect_error(error) from None
        try:
            if not allow_network_mounts and os.statvfs(f"/proc/self/fd/{fd}").f_type in _NETWORK_FS:  # type: ignore[attr-defined]
                raise ConnectError(Code.INVALID_ARGUMENT, f"cannot watch path on network filesystem: {path}")
        except AttributeError:
            pass  # statvfs has no f_type before Python 3.13: local folders are all this server makes
        except BaseException:
            os.close(fd)
            raise
        try:
            return Watch(f"/proc/self/fd/{fd}", recursive=recursive)
        except WatchLimit as error:
            raise ConnectError(Code.RESOURCE_EXHAUSTED, f"cannot watch {path}: {error}") from None
        except WatchError as error:
            raise ConnectError(Code.INTERNAL, f"error adding path {path} to watcher: {error}") from None
        finally:
            # Not held open: the kernel reports a folder's removal only once nothing holds it (see `Watch`).
            os.close(fd)

    @staticmethod
    def _event(call: _Call, folder: str, change: Change, include_entry: bool) -> pb.FilesystemEvent:
        event = pb.FilesystemEvent(name=change.name, type=_KIND_TO_EVENT[change.kind])
        if include_entry and change.kind in _CARRIES_ENTRY:
            shown = folder.rstrip("/") + "/" + change.name if change.name != "." else folder
            try:
                event.entry = entry_info(call.root, call.accounts, shown, shown)
            except (PathError, OSError):
                pass  # gone again before we looked: the event goes without its entry, as envd's does
        return event

    @classmethod
    async def _event_of(cls, call: _Call, folder: str, change: Change, include_entry: bool) -> pb.FilesystemEvent:
        # A worker only where the disk is read: a thread hop per event held a burst to ~3,000 events a second.
        if include_entry and change.kind in _CARRIES_ENTRY:
            return await asyncio.to_thread(cls._event, call, folder, change, include_entry)
        return cls._event(call, folder, change, include_entry)

    async def watch_dir(self, request: pb.WatchDirRequest, ctx: Any) -> AsyncIterator[pb.WatchDirResponse]:
        call = self._call(ctx)
        path = call.path(request.path)
        watch = await self._start_watch(call, path, request.recursive, request.allow_network_mounts)
        interval = _keepalive_seconds(ctx.request_headers)
        stopped = asyncio.ensure_future(call.sandbox.wait_not_running())
        # The wait for the next change outlives a keepalive: cancelling it would end the changes' generator.
        next_change: asyncio.Future[Any] | None = None
        try:
            watch.start()
            yield pb.WatchDirResponse(
                event=Oneof[Literal["start"], pb.WatchDirResponse.StartEvent]("start", pb.WatchDirResponse.StartEvent())
            )
            changes = watch.changes().__aiter__()
            while True:
                if next_change is None:
                    next_change = asyncio.ensure_future(changes.__anext__())
                done, _ = await asyncio.wait(
                    {next_change, stopped}, timeout=interval, return_when=asyncio.FIRST_COMPLETED
                )
                if stopped in done:
                    raise _stopped_error(call.sandbox)
                if not done:
                    yield pb.WatchDirResponse(
                        event=Oneof[Literal["keepalive"], pb.WatchDirResponse.KeepAlive](
                            "keepalive", pb.WatchDirResponse.KeepAlive()
                        )
                    )
                    continue
                arrived, next_change = next_change, None
                try:
                    change = arrived.result()
                except WatchError as error:
                    raise ConnectError(Code.INTERNAL, str(error)) from None
                event = await self._event_of(call, path, change, request.include_entry)
                yield pb.WatchDirResponse(event=Oneof[Literal["filesystem"], pb.FilesystemEvent]("filesystem", event))
        finally:
            # A client gone mid-wait leaves these pending; cancelled here, they are not destroyed pending.
            stopped.cancel()
            if next_change is not None:
                next_change.cancel()
            watch.close()
            self._release(call.sandbox.sandbox_id)

    async def create_watcher(self, request: pb.CreateWatcherRequest, ctx: Any) -> pb.CreateWatcherResponse:
        call = self._call(ctx)
        self._forget_gone()
        path = call.path(request.path)
        watch = await self._start_watch(call, path, request.recursive, request.allow_network_mounts)
        watcher_id = "w" + secrets.token_hex(10)
        watcher = _Watcher(call.sandbox.sandbox_id, watch)
        watch.start()
        watcher.task = asyncio.ensure_future(self._collect(call, path, watcher, request.include_entry))
        self._watchers[watcher_id] = watcher
        return pb.CreateWatcherResponse(watcher_id=watcher_id)

    async def _collect(self, call: _Call, path: str, watcher: _Watcher, include_entry: bool) -> None:
        try:
            async for change in watcher.watch.changes():
                event = await self._event_of(call, path, change, include_entry)
                if len(watcher.events) >= MAX_PENDING_EVENTS:
                    watcher.error = ConnectError(
                        Code.RESOURCE_EXHAUSTED, f"watcher error: more than {MAX_PENDING_EVENTS} events were not polled"
                    )
                    return
                watcher.events.append(event)
        except WatchError as error:
            watcher.error = ConnectError(Code.INTERNAL, str(error))

    def _watcher(self, ctx: Any, watcher_id: str) -> _Watcher:
        call = self._call(ctx)
        watcher = self._watchers.get(watcher_id)
        # Another sandbox's watcher is not this sandbox's business: the same answer as no watcher.
        if watcher is None or watcher.sandbox_id != call.sandbox.sandbox_id:
            raise ConnectError(Code.NOT_FOUND, f"watcher with id {watcher_id} not found")
        return watcher

    async def get_watcher_events(self, request: pb.GetWatcherEventsRequest, ctx: Any) -> pb.GetWatcherEventsResponse:
        watcher = self._watcher(ctx, request.watcher_id)
        if watcher.error is not None:
            raise watcher.error
        events, watcher.events = watcher.events, []
        return pb.GetWatcherEventsResponse(events=events)

    async def remove_watcher(self, request: pb.RemoveWatcherRequest, ctx: Any) -> pb.RemoveWatcherResponse:
        watcher = self._watcher(ctx, request.watcher_id)
        del self._watchers[request.watcher_id]
        watcher.close()
        self._release(watcher.sandbox_id)
        return pb.RemoveWatcherResponse()

    def forget_sandbox(self, sandbox_id: str) -> None:
        """Close every watcher of a sandbox that is gone (the runtime calls it on kill; polls also sweep)."""
        self._lanes.pop(sandbox_id, None)
        for watcher_id, watcher in list(self._watchers.items()):
            if watcher.sandbox_id == sandbox_id:
                del self._watchers[watcher_id]
                watcher.close()
                self._release(sandbox_id)

    def _forget_gone(self) -> None:
        for sandbox_id in {w.sandbox_id for w in self._watchers.values()}:
            try:
                self._lookup({"e2b-sandbox-id": sandbox_id})
            except SandboxGone:
                self.forget_sandbox(sandbox_id)


def _release(lane: asyncio.Semaphore, done: asyncio.Future[Any]) -> None:
    lane.release()
    if not done.cancelled():
        done.exception()  # retrieved: a call its client gave up on fails unlogged, as it would have answered


def _refuse_mount_point(path: str, done: str) -> None:
    """The sandbox's mount points stay where they are: a sandbox that swapped one for a symlink would have the
    host folder it names bound in its place at its next start (layout.open_bound refuses to, as a second guard)."""
    if path in MOUNT_POINTS:
        raise PathError("failed_precondition", f"'{path}' is a mount point of the sandbox and cannot be {done}")


def _walk(call: _Call, shown: str, real: str, depth: int, out: list[pb.EntryInfo]) -> None:
    """envd's ListDir walk: depth-first, names in order, links listed and never descended.

    By a stack of the folders being listed, not recursion: a sandbox can make a tree deeper than Python's
    recursion limit (a red team's 1,500 levels answered `unknown: maximum recursion depth exceeded`)."""
    top = _children(call, shown, real)
    stack: list[Iterator[tuple[str, str]]] = [iter(top)] if top else []
    while stack:
        try:
            child_shown, child_real = next(stack[-1])
        except StopIteration:
            stack.pop()
            continue
        try:
            info = entry_info(call.root, call.accounts, child_shown, child_real)
        except PathError:
            continue  # removed while listing
        out.append(info)
        if len(stack) < depth and info.type == pb.FileType.DIRECTORY and not info.is_symlink:
            below = _children(call, child_shown, child_real)
            if below:
                stack.append(iter(below))


def _children(call: _Call, shown: str, real: str) -> list[tuple[str, str]]:
    """The (shown, real) paths of a folder's entries, by name; none if it went meanwhile."""
    with call.root.resolve(real, follow=False) as found:
        try:
            fd = os.open(
                found.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=found.parent_fd
            )
        except FileNotFoundError:
            return []
    try:
        names = sorted(os.listdir(fd))
    finally:
        os.close(fd)
    return [(shown.rstrip("/") + "/" + name, real.rstrip("/") + "/" + name) for name in names]


def _chown(parent_fd: int, name: str, owner: tuple[int, int]) -> None:
    try:
        os.chown(name, *owner, dir_fd=parent_fd, follow_symlinks=False)
    except PermissionError:
        pass  # an unprivileged server: its files are the sandbox user's already
    except FileNotFoundError:
        pass  # removed by the sandbox's own processes since it was made: nothing left to give


def _keepalive_seconds(headers: Mapping[str, str]) -> float:
    try:
        return max(1, int(headers.get("keepalive-ping-interval", "")))
    except ValueError:
        return DEFAULT_KEEPALIVE_SECONDS


def _stopped_error(sandbox: SandboxView) -> ConnectError:
    if sandbox.state == "paused":
        return ConnectError(Code.CANCELED, "the sandbox was paused: the watch ended")
    return ConnectError(Code.CANCELED, "the sandbox was killed: the watch ended")


ASGIApp = Callable[[dict[str, Any], Any, Any], Awaitable[None]]


def _ends_with_its_client(app: ASGIApp) -> ASGIApp:
    """WatchDir streams end when their client goes away, not at the next event or keepalive.

    A Connect server stream waits on its generator and reads nothing more from the
    client; without this a closed watch would hold its inotify instance (and a place
    under the per-sandbox limit) until it next had something to send.
    """

    async def wrapped(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not scope["path"].endswith("/WatchDir"):
            await app(scope, receive, send)
            return
        task = asyncio.current_task()
        assert task is not None
        listener: asyncio.Future[None] | None = None
        gone = False

        async def until_disconnect() -> None:
            nonlocal gone
            while (await receive())["type"] != "http.disconnect":
                pass
            gone = True
            task.cancel()

        async def request_then_listen() -> Any:
            nonlocal listener
            message = await receive()
            if message["type"] == "http.request" and not message.get("more_body") and listener is None:
                listener = asyncio.ensure_future(until_disconnect())
            return message

        try:
            await app(scope, request_then_listen, send)
        except asyncio.CancelledError:
            if not gone:
                raise
        except ConnectError as error:
            # connectrpc turns the cancellation into its own `canceled` error as it leaves: the client is
            # gone, and nobody is left to tell (uvicorn would log it as an app's failure, with its traceback).
            if not (gone and error.code is Code.CANCELED):
                raise
        finally:
            if listener is not None:
                listener.cancel()

    return wrapped


class FilesystemApp:
    """The ASGI app for `/filesystem.Filesystem/*`, and the service behind it (for `forget_sandbox`)."""

    def __init__(self, lookup: Lookup) -> None:
        self.service = FilesystemService(lookup)
        # An undecodable or undecompressable request is the client's fault: invalid_argument.
        connect = FilesystemASGIApplication(self.service, codecs=envd_codecs(), compressions=envd_compressions())
        self._app = _ends_with_its_client(connect)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        await self._app(scope, receive, send)

    def forget_sandbox(self, sandbox_id: str) -> None:
        """Close the watchers of a sandbox that is gone (its streams end by themselves)."""
        self.service.forget_sandbox(sandbox_id)


def filesystem_asgi_app(lookup: Lookup) -> FilesystemApp:
    """The Connect app for `/filesystem.Filesystem/*`; `lookup` finds each call's sandbox from its headers."""
    return FilesystemApp(lookup)
