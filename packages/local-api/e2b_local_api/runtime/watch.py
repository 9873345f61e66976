"""Changes under a sandbox folder, from the kernel's inotify, recursive on demand.

One inotify instance per watch, read on the event loop when the kernel says it
is readable (no polling). Events are named as envd names them (fsnotify's
Linux mapping): create and moved-to are CREATE, modify is WRITE, delete is
REMOVE, moved-from is RENAME, attrib is CHMOD; names are relative to the
watched folder. A recursive watch adds each folder created under it. Not
`watchfiles`: it reports a rename as a delete and an add, and a chmod as a
modify, which the SDK's event types tell apart.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import os
import struct
from collections.abc import AsyncIterator
from dataclasses import dataclass

IN_MODIFY = 0x002
IN_ATTRIB = 0x004
IN_MOVED_FROM = 0x040
IN_MOVED_TO = 0x080
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ISDIR = 0x40000000
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000

_MASK = IN_MODIFY | IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF
_HEADER = struct.Struct("iIII")

# Bounds: folders one recursive watch follows, events queued unread.
MAX_FOLDERS_PER_WATCH = 8192
MAX_QUEUED_EVENTS = 10_000

_libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)


class WatchError(Exception):
    """The watch cannot start or cannot go on."""


class WatchLimit(WatchError):
    """The watch would pass one of this module's bounds."""


@dataclass(frozen=True)
class Change:
    """One event: `kind` is create/write/remove/rename/chmod; `name` is relative to the watched folder."""

    kind: str
    name: str
    host_path: str


def _kinds(mask: int) -> list[str]:
    kinds = []
    if mask & (IN_CREATE | IN_MOVED_TO):
        kinds.append("create")
    if mask & (IN_MOVED_FROM | IN_MOVE_SELF):
        kinds.append("rename")
    if mask & IN_ATTRIB:
        kinds.append("chmod")
    if mask & IN_MODIFY:
        kinds.append("write")
    if mask & (IN_DELETE | IN_DELETE_SELF):
        kinds.append("remove")
    return kinds


class Watch:
    """An open inotify watch on one host folder; iterate `changes()`, then `close()`."""

    def __init__(self, host_folder: str, *, recursive: bool) -> None:
        self._top = host_folder.rstrip("/") or "/"
        self._recursive = recursive
        fd = _libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            raise WatchError(f"cannot create an inotify instance: {os.strerror(ctypes.get_errno())}")
        self._fd = fd
        self._folders: dict[int, str] = {}  # watch descriptor → folder relative to the top ("" is the top)
        self._queue: asyncio.Queue[Change | BaseException] = asyncio.Queue()
        self._loop: asyncio.AbstractEventLoop | None = None
        try:
            self._add("")
            if recursive:
                for dirpath, dirnames, _ in os.walk(self._top):
                    for name in dirnames:
                        rel = os.path.relpath(os.path.join(dirpath, name), self._top)
                        self._add(rel)
        except BaseException:
            os.close(self._fd)
            raise

    def _add(self, rel: str) -> None:
        if len(self._folders) >= MAX_FOLDERS_PER_WATCH:
            raise WatchLimit(f"a recursive watch follows at most {MAX_FOLDERS_PER_WATCH} folders: watch a smaller tree")
        path = os.path.join(self._top, rel) if rel else self._top
        # The top may be a /proc/self/fd link (to a folder opened inside the root): follow that one only.
        flags = _MASK | IN_ONLYDIR | (IN_DONT_FOLLOW if rel else 0)
        wd = _libc.inotify_add_watch(self._fd, os.fsencode(path), flags)
        if wd < 0:
            err = ctypes.get_errno()
            if rel:
                return  # a folder gone or replaced since it was seen: nothing to follow
            raise WatchError(f"cannot watch the folder: {os.strerror(err)}")
        self._folders[wd] = rel

    def start(self) -> None:
        """Start delivering events to `changes()` (call on the event loop that reads them)."""
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(self._fd, self._on_readable)

    def _on_readable(self) -> None:
        try:
            data = os.read(self._fd, 64 * 1024)
        except BlockingIOError:
            return
        except OSError as error:
            self._fail(WatchError(f"watcher error: {error}"))
            return
        offset = 0
        while offset + _HEADER.size <= len(data):
            wd, mask, _cookie, length = _HEADER.unpack_from(data, offset)
            raw = data[offset + _HEADER.size : offset + _HEADER.size + length].rstrip(b"\0")
            offset += _HEADER.size + length
            if mask & IN_Q_OVERFLOW:
                self._fail(WatchError("watcher error: the kernel's event queue overflowed"))
                return
            folder = self._folders.get(wd)
            if folder is None:
                continue
            if mask & IN_IGNORED:
                del self._folders[wd]
                continue
            name = os.fsdecode(raw)
            if not name and folder:
                continue  # a subfolder's own delete/move: its parent reports it already
            rel = os.path.join(folder, name) if name else (folder or ".")
            if self._recursive and name and mask & IN_ISDIR and mask & (IN_CREATE | IN_MOVED_TO):
                try:
                    self._add(rel)
                except WatchError as error:
                    self._fail(error)
                    return
            for kind in _kinds(mask):
                self._put(Change(kind, rel, os.path.join(self._top, rel)))

    def _put(self, item: Change | BaseException) -> None:
        if self._queue.qsize() >= MAX_QUEUED_EVENTS:
            item = WatchError(f"watcher error: more than {MAX_QUEUED_EVENTS} events unread")
        self._queue.put_nowait(item)

    def _fail(self, error: BaseException) -> None:
        self._queue.put_nowait(error)
        if self._loop is not None:
            self._loop.remove_reader(self._fd)

    async def changes(self) -> AsyncIterator[Change]:
        while True:
            item = await self._queue.get()
            if isinstance(item, BaseException):
                raise item
            yield item

    def drain(self) -> list[Change]:
        """The changes queued so far, without waiting; raises the watch's error once the queue reaches it."""
        out: list[Change] = []
        while not self._queue.empty():
            item = self._queue.get_nowait()
            if isinstance(item, BaseException):
                self._queue.put_nowait(item)  # keep failing every later poll too
                if out:
                    return out
                raise item
            out.append(item)
        return out

    def close(self) -> None:
        if self._fd >= 0:
            if self._loop is not None and not self._loop.is_closed():
                self._loop.remove_reader(self._fd)
            os.close(self._fd)
            self._fd = -1
