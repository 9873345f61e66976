"""A sandbox path, resolved inside the sandbox's root folder and never outside it.

The sandbox's `/` is a host folder; its processes can plant symlinks anywhere in
it. Every path a request names is walked one component at a time from an open
descriptor of that folder, `O_NOFOLLOW`, with `..` and each symlink (absolute
or relative) resolved with the folder as `/`: what `openat2(RESOLVE_IN_ROOT)`
does, done by hand because Python has no wrapper and a walk also tells us the
resolved path. Callers act on the result through its parent's descriptor, so a
symlink swapped in after the walk is never followed either.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

# Linux's own bound on symlinks followed while resolving one path.
MAX_SYMLINKS = 40

_DIR_FLAGS = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class PathError(Exception):
    """A path the sandbox cannot use; `kind` is the Connect code's name (`invalid_argument`, `not_found`, ...)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def absolute(path: str, home: str) -> str:
    """The sandbox-absolute, lexically clean form of `path` (`~` and relative paths start at `home`).

    Lexical `..` is folded first, as envd does (`/home/user/../x` is `/home/x`); the
    walk then resolves symlinks. A NUL byte is refused: no kernel call takes one.
    """
    if "\0" in path:
        raise PathError("invalid_argument", f"path {path!r} contains a NUL byte")
    if path.startswith("~"):
        if len(path) > 1 and path[1] != "/":
            raise PathError("invalid_argument", f"cannot expand another user's home in {path!r}: use an absolute path")
        path = home + path[1:]
    if not path.startswith("/"):
        path = home.rstrip("/") + "/" + path
    return clean(path)


def clean(path: str) -> str:
    """Lexical clean of an absolute path, `..` stopping at `/` (Go's `filepath.Clean`)."""
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                parts.pop()
            continue
        parts.append(part)
    return "/" + "/".join(parts)


@dataclass
class Resolved:
    """Where a sandbox path lands: its parent folder (open) and its last name there.

    `parent_fd` is an `O_PATH` descriptor of the parent folder, owned by this
    object (close it, or use the object as a context manager). `name` is `"."`
    when the path is the root itself. `path` is the sandbox-absolute path with
    every symlink in the parents resolved (and the last one too, if followed).
    """

    parent_fd: int
    name: str
    path: str

    def close(self) -> None:
        if self.parent_fd >= 0:
            os.close(self.parent_fd)
            self.parent_fd = -1

    def __enter__(self) -> Resolved:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class SandboxRoot:
    """One sandbox's root folder, and the only way this server reaches a file in it."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def host_path(self, sandbox_path: str) -> str:
        """The host name of a resolved sandbox path: for messages and watchers only, never to open."""
        return os.path.join(self.root, sandbox_path.lstrip("/"))

    def resolve(self, path: str, *, follow: bool = True, create_parents: tuple[int, int] | None = None) -> Resolved:
        """Walk the sandbox-absolute `path` inside the root.

        `follow`: whether a symlink as the last component is followed (`stat`
        does not; `open` does). `create_parents=(uid, gid)`: missing parent
        folders are made (mode 0755, owned by them, as envd's `EnsureDirs`);
        otherwise a missing parent is `not_found`. The last component need not
        exist.
        """
        if "\0" in path:
            raise PathError("invalid_argument", f"path {path!r} contains a NUL byte")
        pending = _components(path)
        pending.reverse()  # a stack: the next component is last
        done: list[str] = []  # resolved names from the root, each a real folder
        fd = self._open_root()
        links = 0
        try:
            while pending:
                part = pending.pop()
                if part == ".":
                    continue  # kept until here: "x/." and "x/" make x a folder to go through, not a last name
                if part == "..":
                    # The root's parent is the root; any other folder's is the one before it.
                    if done:
                        done.pop()
                        os.close(fd)
                        fd = self._reopen(done)
                    continue
                last = not pending
                try:
                    st = os.stat(part, dir_fd=fd, follow_symlinks=False)
                except FileNotFoundError:
                    if last:
                        return Resolved(fd, part, _join(done, part))
                    if create_parents is None:
                        raise PathError("not_found", f"path '{_join(done, part)}' does not exist") from None
                    _make_dir(fd, part, create_parents)
                    st = os.stat(part, dir_fd=fd, follow_symlinks=False)
                if stat.S_ISLNK(st.st_mode) and (follow or not last):
                    links += 1
                    if links > MAX_SYMLINKS:
                        raise PathError("failed_precondition", f"too many levels of symlinks in '{path}'")
                    target = os.readlink(part, dir_fd=fd)
                    if "\0" in target:  # pragma: no cover - the kernel never stores one
                        raise PathError("invalid_argument", "symlink target contains a NUL byte")
                    if target.startswith("/"):
                        done.clear()
                        os.close(fd)
                        fd = self._open_root()
                    pending.extend(reversed(_components(target)))
                    continue
                if last:
                    return Resolved(fd, part, _join(done, part))
                if not stat.S_ISDIR(st.st_mode):
                    raise PathError("invalid_argument", f"'{_join(done, part)}' is not a directory")
                try:
                    child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except OSError as error:  # replaced by a symlink or a file since the stat
                    raise PathError("failed_precondition", f"'{_join(done, part)}' changed while resolving") from error
                os.close(fd)
                fd = child
                done.append(part)
            # The path named a folder (or the root) itself: hand back its parent and name.
            if not done:
                return Resolved(fd, ".", "/")
            name = done.pop()
            os.close(fd)
            return Resolved(self._reopen(done), name, _join(done, name))
        except BaseException:
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
            raise

    def realpath(self, path: str) -> str | None:
        """Every symlink of `path` resolved inside the root (envd's `EvalSymlinks`); None if it does not resolve."""
        try:
            with self.resolve(path, follow=True) as found:
                os.stat(found.name, dir_fd=found.parent_fd, follow_symlinks=False)
                return found.path
        except (PathError, OSError):
            return None

    def _open_root(self) -> int:
        try:
            return os.open(self.root, _DIR_FLAGS)
        except FileNotFoundError:
            raise PathError("unavailable", "the sandbox's folder is gone") from None

    def _reopen(self, names: list[str]) -> int:
        fd = self._open_root()
        for name in names:
            try:
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as error:
                os.close(fd)
                raise PathError("failed_precondition", f"'{_join(names, '')}' changed while resolving") from error
            os.close(fd)
            fd = child
        return fd


def _components(path: str) -> list[str]:
    """The names of a path, with "." for each empty or "." one (they matter after the last name only)."""
    return [part or "." for part in path.split("/")]


def _join(parents: list[str], name: str) -> str:
    return "/" + "/".join([*parents, name]).strip("/") if name else "/" + "/".join(parents)


def _make_dir(parent_fd: int, name: str, owner: tuple[int, int]) -> None:
    try:
        os.mkdir(name, 0o755, dir_fd=parent_fd)
    except FileExistsError:
        pass
    try:
        os.chown(name, *owner, dir_fd=parent_fd, follow_symlinks=False)
    except PermissionError:
        pass  # an unprivileged server: its files are the sandbox user's already
    except OSError as error:
        if error.errno != errno.ENOENT:
            raise


def remove_tree(parent_fd: int, name: str) -> None:
    """Remove the folder `name` of `parent_fd` and everything under it, never following a link.

    Python 3.11's `shutil.rmtree` recurses once a level: a sandbox's tree deeper than the interpreter's limit
    goes by coreutils' `rm`, handed the folder through this process's descriptor of its parent.
    """
    try:
        shutil.rmtree(name, dir_fd=parent_fd)
    except RecursionError:
        subprocess.run(
            ["rm", "-rf", "--", f"/proc/{os.getpid()}/fd/{parent_fd}/{name}"], check=True, capture_output=True
        )
