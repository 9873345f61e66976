"""The sandbox's users and groups, read from its own `/etc/passwd` and `/etc/group`.

envd looks names up in the sandbox's files, never the host's; so does this. A
server that is not root cannot give files to uid 1000: its own uid is then the
sandbox's user (bubblewrap maps it so), and is reported as that user here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .paths import PathError, SandboxRoot

# E2B's images: the default user, and where names are missing from the sandbox's files.
DEFAULT_USER = "user"
_FALLBACK_USERS = {"root": (0, 0, "/root"), "user": (1000, 1000, "/home/user")}
_FALLBACK_GROUPS = {0: "root", 1000: "user"}
_MAX_ACCOUNT_FILE = 1 << 20


@dataclass(frozen=True)
class Account:
    name: str
    uid: int
    gid: int
    home: str


class UnknownUser(Exception):
    """A user name the sandbox does not have."""


class Accounts:
    """Names and ids of one sandbox's users, as its processes see them."""

    def __init__(self, root: SandboxRoot, id_offset: int = 0) -> None:
        self._root = root
        self._offset = id_offset  # a root server maps the sandbox's ids to these plus the offset
        self._read: dict[str, list[list[str]]] = {}  # one request's view: a listing reads the files once

    def user(self, name: str | None) -> Account:
        """The named user (the sandbox's default user when None or empty)."""
        name = name or DEFAULT_USER
        for fields in self._entries("/etc/passwd", 7):
            if fields[0] == name and fields[2].isdigit() and fields[3].isdigit():
                return Account(name, int(fields[2]), int(fields[3]), fields[5] or "/")
        if name in _FALLBACK_USERS:
            uid, gid, home = _FALLBACK_USERS[name]
            return Account(name, uid, gid, home)
        raise UnknownUser(f"user '{name}' does not exist in the sandbox: use 'user' or 'root'")

    def host_owner(self, account: Account) -> tuple[int, int]:
        """The host ids a file of `account` gets (the server's own when it cannot chown)."""
        if os.geteuid() == 0:
            return account.uid + self._offset, account.gid + self._offset
        return os.geteuid(), os.getegid()

    def owner_names(self, host_uid: int, host_gid: int) -> tuple[str, str]:
        """The names `ls -l` inside the sandbox shows for a file owned by these host ids (numbers if unknown)."""
        uid, gid = host_uid, host_gid
        if os.geteuid() == 0 and self._offset:
            uid = host_uid - self._offset if host_uid >= self._offset else -1
            gid = host_gid - self._offset if host_gid >= self._offset else -1
        elif os.geteuid() != 0:
            # Unprivileged: the server's ids are the sandbox user's inside.
            default = self.user(DEFAULT_USER)
            uid = default.uid if host_uid == os.geteuid() else host_uid
            gid = default.gid if host_gid == os.getegid() else host_gid
        users = {f[2]: f[0] for f in self._entries("/etc/passwd", 7)}
        groups = {f[2]: f[0] for f in self._entries("/etc/group", 3)}
        if uid < 0 or gid < 0:  # a host file the sandbox's namespace maps to nobody
            return "nobody", "nogroup"
        owner = users.get(str(uid)) or {v[0]: k for k, v in _FALLBACK_USERS.items()}.get(uid, str(uid))
        group = groups.get(str(gid)) or _FALLBACK_GROUPS.get(gid, str(gid))
        return owner, group

    def _entries(self, path: str, width: int) -> list[list[str]]:
        if path not in self._read:
            self._read[path] = self._parse(path, width)
        return self._read[path]

    def _parse(self, path: str, width: int) -> list[list[str]]:
        # Read through the confined walk: the sandbox may have made /etc/passwd a symlink.
        try:
            with self._root.resolve(path) as found:
                fd = os.open(found.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=found.parent_fd)
        except (PathError, OSError):
            return []
        try:
            data = os.read(fd, _MAX_ACCOUNT_FILE)
        except OSError:
            return []
        finally:
            os.close(fd)
        entries = []
        for line in data.decode("utf-8", "replace").splitlines():
            fields = line.split(":")
            if len(fields) >= width - 1 and not line.startswith("#"):
                entries.append(fields + [""] * (width - len(fields)))
        return entries
