"""Codegen's cache folder: where it is (`E2B_CODEGEN_CACHE`, else the user cache dir), and that it is this user's.

How it works, and why: docs/maintainers/design.md, "toolkit/cache_folder.py".
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from platformdirs import user_cache_dir

from toolkit.errors import Problem, ToolError
from toolkit.paths import Project
from toolkit.printable import printable

CACHE_ENV = "E2B_CODEGEN_CACHE"
_WRITABLE_BY_OTHERS = stat.S_IWGRP | stat.S_IWOTH


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or user_cache_dir("e2b-codegen"))


def cache_root(project: Project) -> Path:
    """The cache folder, resolved, made if missing (mode 0700); refused (exit 2) inside the project or not private.

    The folder and each folder directly in it must be `require_private`; what lies deeper is checked
    where it is read (a cached repository before git runs in it, an entry as it is read).
    """
    folder = cache_dir().resolve()
    if os.pathsep in str(folder):
        # The generators' PATH starts with a folder in there: a separator would split it in two.
        raise ToolError(
            Problem(
                f"the codegen cache {printable(str(folder))} has {os.pathsep!r} in its path, which the "
                f"generators' PATH cannot hold: point {CACHE_ENV} at a folder without it"
            )
        )
    if folder.is_relative_to(project.root.resolve()):
        raise ToolError(
            Problem(
                f"the codegen cache {folder} is inside the project, where a commit could fill it: "
                f"point {CACHE_ENV} at a folder outside the repository, or unset it"
            )
        )
    return private_cache_dir(folder)


def private_cache_dir(folder: Path | None = None) -> Path:
    """`folder` (default: the configured one, resolved), made if missing, and checked with what it directly holds."""
    folder = folder or cache_dir().resolve()
    make_private_folder(folder)
    require_private(folder)
    try:
        entries = list(os.scandir(folder))
    except OSError as error:
        raise _refused(folder, f"cannot be listed ({error.strerror})", "check the folder, or delete it") from None
    for entry in entries:
        if entry.is_dir(follow_symlinks=False) or entry.is_symlink():
            require_private(Path(entry.path))
    return folder


def make_private_folder(folder: Path) -> None:
    """`folder`, created mode 0700 when missing (its parents as the system makes them)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        pass  # an existing one is checked, never changed


def require_private(path: Path) -> None:
    """Refuse (exit 2) `path` unless it is this user's folder or file, with no group or other write bit."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return  # gone (another run removed its scratch folder): nothing there to trust
    except OSError as error:
        raise _refused(path, f"cannot be read ({error.strerror})", "check the folder, or delete it") from None
    if stat.S_ISLNK(info.st_mode):
        raise _refused(path, "is a symlink, which codegen never makes there", f"delete {path}")
    if info.st_uid != os.geteuid():
        raise _refused(
            path,
            f"belongs to another user (uid {info.st_uid})",
            f"delete it, or point {CACHE_ENV} at a folder of your own",
        )
    if info.st_mode & _WRITABLE_BY_OTHERS:
        raise _refused(
            path,
            f"is writable by others (mode {stat.S_IMODE(info.st_mode):04o})",
            f"`chmod go-w {path}` if nobody else wrote to it, else delete it",
        )


def require_private_tree(folder: Path) -> None:
    """`require_private` for `folder` and every folder and file under it (a cached repository, before git runs)."""
    pending = [folder]
    while pending:
        current = pending.pop()
        require_private(current)
        try:
            entries = list(os.scandir(current))
        except NotADirectoryError:
            continue
        except FileNotFoundError:
            continue
        except OSError as error:
            raise _refused(current, f"cannot be listed ({error.strerror})", "delete it") from None
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                pending.append(Path(entry.path))
            else:
                require_private(Path(entry.path))


def _refused(path: Path, why: str, fix: str) -> ToolError:
    return ToolError(
        Problem(
            f"{why}: codegen trusts what its cache folder holds, so the folder and all in it must be yours alone",
            where=str(path),
            remedy=fix,
        )
    )
