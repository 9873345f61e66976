"""Changes under a sandbox folder, from the kernel's inotify, recursive on demand.

One inotify instance per watch, read on the event loop when the kernel says it
is readable (no polling). Events are named as envd names them (fsnotify's
Linux mapping); names are relative to the watched folder. A recursive watch
follows each folder that appears under it, reached only through descriptors
opened `O_NOFOLLOW` from the watched folder (reopened from its parent if still
the same): no symlink the sandbox plants leads a watch outside it. Not
`watchfiles`: it reports a rename as a delete and an add, a chmod as a modify.
"""

from __future__ import annotations

import array
import asyncio
import ctypes
import ctypes.util
import errno
import fcntl
import os
import struct
import termios
from collections import deque
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
# A folder on the way down is only passed through (no read permission needed); the one watched is listed.
_PASS_FLAGS = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_LIST_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# Folder moves remembered to tell a move inside the watch from one into it (fsnotify remembers 10).
_MOVES_REMEMBERED = 10

# Bounds: folders one recursive watch follows, events queued here before the kernel's queue is left unread.
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
    """An open inotify watch on one host folder; iterate `changes()`, then `close()`.

    `host_folder` is trusted and followed (the server passes a `/proc/self/fd`
    link to a folder it resolved inside the root); nothing below it is: every
    folder under it is opened from its parent's descriptor, `O_NOFOLLOW`, and
    watched through that descriptor. A symlink swapped into the middle of a
    path before its event is read makes that folder unreachable, not a door to
    the server's own tree (`paths.SandboxRoot` resolves symlinks inside the
    root; here none is followed at all, as `os.walk` follows none).
    """

    def __init__(self, host_folder: str, *, recursive: bool) -> None:
        self._top = host_folder.rstrip("/") or "/"
        self._recursive = recursive
        fd = _libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            number = ctypes.get_errno()
            # EMFILE: the server user's inotify instances (fs.inotify.max_user_instances) are all in use.
            kind = WatchLimit if number in (errno.EMFILE, errno.ENFILE, errno.ENOMEM) else WatchError
            raise kind(f"cannot create an inotify instance: {os.strerror(number)}")
        self._fd = fd
        self._folders: dict[int, str] = {}  # watch descriptor → folder relative to the top ("" is the top)
        self._queue: asyncio.Queue[Change | BaseException] = asyncio.Queue()
        self._held = False  # the kernel's queue left unread while this one is full (`_hold_if_full`)
        self._failed = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._moved_from: deque[int] = deque(maxlen=_MOVES_REMEMBERED)  # cookies of folders moved inside the watch
        # Names reported as found by a walk, whose own create may still sit in the kernel's queue: it is
        # reported once. Only bytes read before `_dedup_until` can hold one (the queue's length after the walk).
        self._found: set[str] = set()
        self._read_total = 0
        self._dedup_until = 0
        # The top is reached later from its parent, by name, and only if it is still the same folder: a
        # descriptor held on the top itself would keep the kernel from ever sending its IN_DELETE_SELF (sent
        # once the last reference to a removed folder goes), and its removal would never be reported.
        self._parent_fd = -1
        try:
            top_fd = os.open(self._top, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as error:
            os.close(self._fd)
            raise WatchError(f"cannot watch the folder: {error.strerror}") from None
        try:
            st = os.fstat(top_fd)
            self._top_id = (st.st_dev, st.st_ino)
            self._top_name = os.path.basename(os.readlink(f"/proc/self/fd/{top_fd}")) or "."
            self._parent_fd = os.open("..", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=top_fd)
            self._add_top(top_fd)
            if recursive:
                self._follow(top_fd, "", report=False)
        except BaseException:
            self._close_fds()
            raise
        finally:
            os.close(top_fd)

    def _add_top(self, top_fd: int) -> None:
        # The top's own /proc/self/fd link is followed (to the folder opened above, nothing else).
        wd = _libc.inotify_add_watch(self._fd, os.fsencode(f"/proc/self/fd/{top_fd}"), _MASK | IN_ONLYDIR)
        if wd < 0:
            raise WatchError(f"cannot watch the folder: {os.strerror(ctypes.get_errno())}")
        self._folders[wd] = ""

    def _add(self, fd: int, rel: str) -> bool:
        """Watch the folder open as `fd` (False if it cannot be watched, e.g. unreadable)."""
        # The /proc/self/fd link is followed to that open folder and nowhere else (IN_DONT_FOLLOW would
        # watch the link itself, which IN_ONLYDIR refuses): no name is resolved again.
        wd = _libc.inotify_add_watch(self._fd, os.fsencode(f"/proc/self/fd/{fd}"), _MASK | IN_ONLYDIR)
        if wd < 0:
            return False
        if wd not in self._folders and len(self._folders) >= MAX_FOLDERS_PER_WATCH:
            _libc.inotify_rm_watch(self._fd, wd)
            raise WatchLimit(f"a recursive watch follows at most {MAX_FOLDERS_PER_WATCH} folders: watch a smaller tree")
        self._folders[wd] = rel  # a folder moved inside the watch keeps its descriptor: this renames it
        return True

    def _open_folder(self, rel: str) -> int | None:
        """An `O_PATH` descriptor of the folder `rel`, each name opened `O_NOFOLLOW` (None if one is not a folder)."""
        try:
            fd = os.open(self._top_name, _PASS_FLAGS, dir_fd=self._parent_fd)
        except OSError:
            return None  # the top is gone or moved away: nothing below it to follow
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != self._top_id:
            os.close(fd)
            return None  # another folder under the top's old name
        for name in rel.split("/") if rel else []:
            try:
                child = os.open(name, _PASS_FLAGS, dir_fd=fd)
            except OSError:
                os.close(fd)
                return None  # gone, or a symlink (ELOOP) or a file (ENOTDIR) now: nothing to follow there
            os.close(fd)
            fd = child
        return fd

    def _follow(self, parent_fd: int, rel: str, *, report: bool) -> None:
        """Watch the folder `rel` (its last name opened from `parent_fd`) and every folder below it.

        Each folder is watched before it is listed, so an entry made meanwhile is
        either listed or queued by the kernel. With `report`, each entry listed is
        reported as created, in `filepath.WalkDir`'s order (see `_on_readable`).
        Depth-first, one descriptor open per level.
        """
        stack: list[tuple[int, str, list[tuple[str, bool]]]] = []
        try:
            fd = self._open_listable(parent_fd, os.path.basename(rel) or ".")
            if fd is None or not self._add(fd, rel):
                if fd is not None:
                    os.close(fd)
                return
            stack.append((fd, rel, _entries(fd)))
            while stack:
                fd, folder, entries = stack[-1]
                if not entries:
                    os.close(fd)
                    stack.pop()
                    continue
                name, is_dir = entries.pop()
                child_rel = os.path.join(folder, name) if folder else name
                if report:
                    self._found.add(child_rel)
                    self._put(Change("create", child_rel))
                if not is_dir:
                    continue
                child = self._open_listable(fd, name)
                if child is None:
                    continue
                if self._add(child, child_rel):
                    stack.append((child, child_rel, _entries(child)))
                else:
                    os.close(child)
        finally:
            for fd, _, _ in stack:
                os.close(fd)

    @staticmethod
    def _open_listable(parent_fd: int, name: str) -> int | None:
        try:
            return os.open(name, _LIST_FLAGS, dir_fd=parent_fd)
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            return None  # gone or replaced since it was seen, or unreadable (fsnotify skips those too)
        except OSError as error:
            if error.errno == errno.ELOOP:
                return None  # replaced by a symlink: not followed
            raise WatchError(f"cannot open a folder to watch: {error.strerror}") from None

    def _follow_new(self, folder: str, name: str, *, report: bool) -> None:
        parent = self._open_folder(folder)
        if parent is None:
            return
        try:
            self._follow(parent, os.path.join(folder, name) if folder else name, report=report)
        finally:
            os.close(parent)
        if report:
            # Creates of found entries can only sit in what the kernel queued until now.
            pending = array.array("i", [0])
            fcntl.ioctl(self._fd, termios.FIONREAD, pending)
            self._dedup_until = max(self._dedup_until, self._read_total + pending[0])

    def start(self) -> None:
        """Start delivering events to `changes()` (call on the event loop that reads them)."""
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(self._fd, self._on_readable)

    def _on_readable(self) -> None:
        self._read_events()
        self._hold_if_full()

    def _read_events(self) -> None:
        try:
            data = os.read(self._fd, 64 * 1024)
        except BlockingIOError:
            return
        except OSError as error:
            self._fail(WatchError(f"watcher error: {error}"))
            return
        start = self._read_total
        self._read_total += len(data)
        moved_to = _moved_to_cookies(data)
        offset = 0
        while offset + _HEADER.size <= len(data):
            if self._found and start + offset >= self._dedup_until:
                self._found.clear()
            wd, mask, cookie, length = _HEADER.unpack_from(data, offset)
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
            if rel in self._found:
                self._found.discard(rel)
                if mask & (IN_CREATE | IN_MOVED_TO):
                    continue  # reported when its folder was walked (and followed then, if a folder)
            for kind in _kinds(mask):
                self._put(Change(kind, rel))
            if not (self._recursive and name and mask & IN_ISDIR):
                continue
            if mask & IN_MOVED_FROM:
                if cookie in moved_to:
                    self._moved_from.append(cookie)
                else:
                    # Moved out of the watch (the kernel queues a move's two halves together): its watches
                    # would go on reporting it under its old name. fsnotify drops them on the folder's
                    # IN_MOVE_SELF; a move split across two reads is followed as moved in, as new.
                    self._unwatch(rel)
            elif mask & (IN_CREATE | IN_MOVED_TO):
                # envd's fsnotify (e2b-dev/fsnotify v0.0.1, backend_inotify.go) walks a folder created or
                # moved in from outside, watching each folder and sending a create for every entry found
                # after the folder's own; a folder moved inside the watch only has its watches renamed.
                moved_inside = bool(mask & IN_MOVED_TO) and cookie in self._moved_from
                try:
                    self._follow_new(folder, name, report=not moved_inside)
                except WatchError as error:
                    self._fail(error)
                    return

    def _unwatch(self, rel: str) -> None:
        """Stop watching the folder `rel` and every folder below it; their later events are ignored."""
        below = rel + "/"
        for wd, folder in list(self._folders.items()):
            if folder == rel or folder.startswith(below):
                _libc.inotify_rm_watch(self._fd, wd)
                del self._folders[wd]  # its IN_IGNORED, and anything queued before it, finds no folder

    def _put(self, item: Change | BaseException) -> None:
        self._queue.put_nowait(item)

    def _hold_if_full(self) -> None:
        """Stop reading the kernel's queue while MAX_QUEUED_EVENTS wait here unread.

        A burst (`seq 12000 | xargs touch`) is read far faster than a stream sends it: a cap on this queue
        ended watches whose client kept up. Held, the events wait in the kernel's queue, and only a client
        that stays behind until that overflows loses the watch (IN_Q_OVERFLOW).
        """
        if not (self._held or self._failed) and self._queue.qsize() >= MAX_QUEUED_EVENTS and self._loop is not None:
            self._loop.remove_reader(self._fd)
            self._held = True

    def _read_again_if_room(self) -> None:
        if self._held and not self._failed and self._fd >= 0 and self._queue.qsize() <= MAX_QUEUED_EVENTS // 2:
            assert self._loop is not None
            self._held = False
            self._loop.add_reader(self._fd, self._on_readable)

    def _fail(self, error: BaseException) -> None:
        self._queue.put_nowait(error)
        self._failed = True  # never read again, held or not
        if self._loop is not None:
            self._loop.remove_reader(self._fd)

    async def changes(self) -> AsyncIterator[Change]:
        while True:
            item = await self._queue.get()
            if isinstance(item, BaseException):
                raise item
            self._read_again_if_room()
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
        self._read_again_if_room()
        return out

    def close(self) -> None:
        if self._fd >= 0:
            if self._loop is not None and not self._loop.is_closed():
                self._loop.remove_reader(self._fd)
            self._close_fds()

    def _close_fds(self) -> None:
        os.close(self._fd)
        self._fd = -1
        if self._parent_fd >= 0:
            os.close(self._parent_fd)
            self._parent_fd = -1


def _moved_to_cookies(data: bytes) -> set[int]:
    """The cookies of the IN_MOVED_TO events in one read."""
    cookies = set()
    offset = 0
    while offset + _HEADER.size <= len(data):
        _, mask, cookie, length = _HEADER.unpack_from(data, offset)
        if mask & IN_MOVED_TO:
            cookies.add(cookie)
        offset += _HEADER.size + length
    return cookies


def _entries(fd: int) -> list[tuple[str, bool]]:
    """A folder's (name, is a folder) pairs, last name first: popped, they come in `filepath.WalkDir`'s order."""
    try:
        with os.scandir(fd) as listing:
            return sorted(((e.name, e.is_dir(follow_symlinks=False)) for e in listing), reverse=True)
    except OSError:
        return []  # gone since it was opened: its parent reports that
