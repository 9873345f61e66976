"""The server's own temporary folders, and what a killed server left of them.

A server killed with SIGKILL never reaches its clean-up: its sandboxes die with
it (bubblewrap's `--die-with-parent`), but their files stay. So a state folder
the server made holds a lock for the server's whole life, and each server that
starts removes the folders whose lock no live process holds. The id-map tools a
root server needs sit in one root-owned folder that every server shares.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import shutil
import stat
import tempfile
from pathlib import Path

STATE_PREFIX = "e2b-local-state-"
LOCK = "server.lock"
KEEP = "keep"  # --keep-state: a folder to look at later, never swept
# Root-only and wiped at boot: a fixed name there cannot be planted by another user.
SHARED_ROOT = Path("/run/e2b-local-api")


def own_state_folder(*, keep: bool = False) -> tuple[Path, int]:
    """A new state folder, and the fd of its lock, held until the process ends (the caller may close it sooner).

    `keep`: marked never to be swept, whatever becomes of its server.

    The lock file appears under its final name already locked (made aside, locked, then renamed),
    so that a sweep never finds it unlocked while its server lives.
    """
    folder = Path(tempfile.mkdtemp(prefix=STATE_PREFIX))
    if keep:
        (folder / KEEP).touch()
    aside = folder / f".{LOCK}.new"
    fd = os.open(aside, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.rename(aside, folder / LOCK)
    return folder, fd


def sweep_dead_state(parent: Path) -> list[Path]:
    """Remove the state folders under `parent` whose server is gone; the ones removed.

    Only folders of this user, not links, holding a lock file no process holds: a folder without
    one is being made (or is no server's) and stays, and so does one marked to keep.
    """
    removed = []
    uid = os.geteuid()
    with contextlib.suppress(OSError):
        for entry in os.scandir(parent):
            if not entry.name.startswith(STATE_PREFIX):
                continue
            try:
                info = entry.stat(follow_symlinks=False)
                if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid or os.path.lexists(Path(entry.path) / KEEP):
                    continue
                fd = os.open(Path(entry.path) / LOCK, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:  # its server is alive
                os.close(fd)
                continue
            try:  # held while removing, so that two sweeps do not both remove it
                shutil.rmtree(entry.path, ignore_errors=True)
                removed.append(Path(entry.path))
            finally:
                os.close(fd)
    return removed


def id_map_writers(script: str) -> str:
    """A folder with `newuidmap` and `newgidmap`, each `script` with its map file's name filled in.

    As root: the shared folder under /run, checked (root's, not a link, mode 0700) and rewritten
    when its scripts differ, so that servers leave nothing behind however they end. Elsewhere
    (no /run to write): a folder of this process, removed at its normal exit.
    """
    try:
        folder = _shared_folder()
    except OSError:
        folder = Path(tempfile.mkdtemp(prefix="e2b-local-idmap-"))
        atexit.register(shutil.rmtree, folder, True)
    for tool, name in (("newuidmap", "uid_map"), ("newgidmap", "gid_map")):
        text = script.format(map_file=name)
        target = folder / tool
        with contextlib.suppress(OSError):
            if not target.is_symlink() and target.read_text() == text and target.stat().st_mode & 0o777 == 0o700:
                continue
        aside = folder / f".{tool}.{os.getpid()}"
        aside.write_text(text)
        aside.chmod(0o700)
        os.replace(aside, target)  # atomic: a server starting now sees the old script or the new one
    return str(folder)


def _shared_folder() -> Path:
    if os.geteuid() != 0:
        raise PermissionError("only root shares the id-map folder")
    folder = SHARED_ROOT
    for path in (SHARED_ROOT, SHARED_ROOT / "idmap"):  # each checked before anything is made in it
        with contextlib.suppress(FileExistsError):
            path.mkdir(mode=0o700)
        info = path.lstat()
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != 0 or info.st_mode & 0o077:
            raise PermissionError(f"{path} is not root's own folder")
        folder = path
    return folder
