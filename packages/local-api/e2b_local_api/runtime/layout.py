"""A sandbox's folder: what its processes see as /home, /root, /tmp and /etc.

Each sandbox owns `<state>/sandboxes/<id>/`; a snapshot owns
`<state>/snapshots/<template id>/`, a copy taken at snapshot time that every
sandbox started from it copies again. The `/etc` files a shell needs are
written for the sandbox, never the host's: the host's login profile alone makes
`bash -l` take 130 ms, and its passwd names the host's users.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

USER_UID = 1000
USER_GID = 1000
HOSTNAME = "e2b.local"

# The folders bound read-write at the same path inside the sandbox: its mount points, which nothing
# may move, remove or replace (the files service refuses to; `open_bound` checks at every start).
BOUND = ("home", "root", "tmp", "etc")
MOUNT_POINTS = frozenset(f"/{name}" for name in BOUND)
# A sandbox's folder is its root's (the host id bubblewrap runs as, which resolves the bound folders
# through it) and the server's alone: no other host user reaches what a sandbox writes (a setuid program
# made by root inside would otherwise run for any of them as that root's host id).
PRIVATE = 0o700

_PASSWD = (
    "root:x:0:0:root:/root:/bin/bash\n"
    "user:x:1000:1000::/home/user:/bin/bash\n"
    "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
)
_GROUP = "root:x:0:\nsudo:x:27:user\nuser:x:1000:\nnogroup:x:65534:\n"
_HOSTS = f"127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.1.1\t{HOSTNAME}\n"
# A login shell reads /etc/profile: keep it to the one thing E2B's images set there.
_PROFILE = 'if [ -d /etc/profile.d ]; then for i in /etc/profile.d/*.sh; do [ -r "$i" ] && . "$i"; done; unset i; fi\n'


@dataclass(frozen=True)
class Layout:
    """Where one sandbox's folders are on the host."""

    root: Path

    def host_path(self, name: str) -> Path:
        return self.root / name

    def create(self, *, resolv_conf: str, host_id: Callable[[int], int]) -> None:
        """Lay out a new sandbox's folders and `/etc` files, owned as inside (`host_id` maps an id inside)."""
        self.root.mkdir(PRIVATE, parents=True, exist_ok=True)
        os.chmod(self.root, PRIVATE)
        for name in BOUND:
            (self.root / name).mkdir(exist_ok=True)
        os.chmod(self.root / "tmp", 0o1777)
        os.chmod(self.root / "root", 0o700)
        home = self.root / "home" / "user"
        home.mkdir(exist_ok=True)
        etc = self.root / "etc"
        (etc / "profile.d").mkdir(exist_ok=True)
        for name, text in (
            ("passwd", _PASSWD),
            ("group", _GROUP),
            ("hosts", _HOSTS),
            ("hostname", HOSTNAME + "\n"),
            ("resolv.conf", resolv_conf),
            ("profile", _PROFILE),
        ):
            (etc / name).write_text(text)
        root_id = host_id(0)
        for path in [self.root] + [self.root / name for name in BOUND] + [etc / "profile.d", *etc.iterdir()]:
            _chown(path, root_id, root_id)
        _chown(home, host_id(USER_UID), host_id(USER_GID))

    def copy_from(self, source: Layout) -> None:
        """This sandbox starts with a copy of `source`'s files (its processes are not copied)."""
        # cp -a keeps owners (the sandbox's ids), which shutil.copytree does not.
        self.root.mkdir(PRIVATE, parents=True, exist_ok=True)
        subprocess.run(["cp", "-a", "--", f"{source.root}/.", str(self.root)], check=True, capture_output=True)
        os.chmod(self.root, PRIVATE)  # after the copy, which gives it the source's mode

    def open_bound(self) -> dict[str, int]:
        """Each bound folder opened (`O_PATH`), by its name, for bubblewrap's `--bind-fd`; the caller closes them.

        Opened from the sandbox's folder without following a link: the files service works on these folders
        from the host, so a folder a sandbox had swapped for a symlink (to `/`) would otherwise be bound where
        it points. Raises `NotADirectoryError` naming the first that is not a real folder.
        """
        opened: dict[str, int] = {}
        root = os.open(self.root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            for name in BOUND:
                try:
                    opened[name] = os.open(name, _BOUND_FLAGS, dir_fd=root)
                except OSError as error:
                    raise NotADirectoryError(f"the sandbox's /{name} is not a folder: {error.strerror}") from None
        except BaseException:
            for fd in opened.values():
                os.close(fd)
            raise
        finally:
            os.close(root)
        return opened

    def remove(self) -> None:
        # Not shutil.rmtree, which recurses once a level in Python 3.11: a sandbox can make a tree deeper than
        # the interpreter's limit, and its folder would stay behind.
        subprocess.run(["rm", "-rf", "--", str(self.root)], check=False, capture_output=True)


_BOUND_FLAGS = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC  # a link fails: ENOTDIR


def host_resolv_conf() -> str:
    """The host's resolvers, for sandboxes allowed on the internet; a loopback one otherwise."""
    try:
        return Path("/etc/resolv.conf").read_text()
    except OSError:
        return "nameserver 127.0.0.53\n"


def _chown(path: Path, uid: int, gid: int) -> None:
    try:
        os.chown(path, uid, gid)
    except PermissionError:
        pass  # an unprivileged server: its own uid is the sandbox's user (see isolation.py)
