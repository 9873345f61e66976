"""EntryInfo for a sandbox path: type, mode, Go-style permissions, owner names, link target, metadata.

Facts as envd reports them: `mode` is the permission bits (of the target, for
a link); `permissions` is Go's `FileMode.String()` of the entry itself
(`drwxr-xr-x`, `Lrwxrwxrwx`); a link's `type` is its target's and
`is_symlink` marks it; a link's `symlink_target` is its fully resolved path
(the link's own path when it does not resolve); metadata is the
`user.e2b.*` extended attributes, without the prefix.
"""

from __future__ import annotations

import os
import stat

from protobuf.wkt import Timestamp

from ..runtime.accounts import Accounts
from ..runtime.paths import PathError, SandboxRoot
from ..wire.envd.filesystem import filesystem_pb as pb

METADATA_PREFIX = "user.e2b."


# Go's FileMode letters, in its order: dir, append, exclusive, temporary, link, device, pipe,
# socket, setuid, setgid, char device, sticky. Only those a Linux stat can produce are tested.
def _type_letters(m: int) -> list[tuple[str, bool]]:
    return [
        ("d", stat.S_ISDIR(m)),
        ("L", stat.S_ISLNK(m)),
        ("D", stat.S_ISBLK(m) or stat.S_ISCHR(m)),
        ("p", stat.S_ISFIFO(m)),
        ("S", stat.S_ISSOCK(m)),
        ("u", bool(m & stat.S_ISUID)),
        ("g", bool(m & stat.S_ISGID)),
        ("c", stat.S_ISCHR(m)),
        ("t", bool(m & stat.S_ISVTX)),
    ]


def go_permissions(st_mode: int) -> str:
    """Go's `os.FileMode(...).String()` for a stat mode."""
    letters = "".join(letter for letter, has in _type_letters(st_mode) if has) or "-"
    bits = "".join(c if st_mode & (1 << (8 - i)) else "-" for i, c in enumerate("rwxrwxrwx"))
    return letters + bits


def _file_type(st_mode: int) -> pb.FileType:
    if stat.S_ISREG(st_mode):
        return pb.FileType.FILE
    if stat.S_ISDIR(st_mode):
        return pb.FileType.DIRECTORY
    if stat.S_ISLNK(st_mode):
        return pb.FileType.SYMLINK
    return pb.FileType.UNSPECIFIED


def read_metadata(fd_path: str) -> dict[str, str]:
    """The `user.e2b.*` attributes of the file `fd_path` names ({} where the filesystem keeps none)."""
    try:
        names = os.listxattr(fd_path)
    except OSError:
        return {}  # ENOTSUP (no xattrs here, e.g. tmpfs without user xattrs) or gone: no metadata
    metadata = {}
    for name in names:
        if not name.startswith(METADATA_PREFIX):
            continue
        try:
            value = os.getxattr(fd_path, name)
        except OSError:
            continue
        try:
            metadata[name[len(METADATA_PREFIX) :]] = value.decode("utf-8")
        except UnicodeDecodeError:
            continue  # set from inside the sandbox with arbitrary bytes: not a string map entry
    return metadata


def entry_info(root: SandboxRoot, accounts: Accounts, shown_path: str, real_path: str) -> pb.EntryInfo:
    """The EntryInfo of `real_path` (parents resolved, the last name not followed), reported as `shown_path`.

    Raises PathError("not_found") when nothing is there.
    """
    with root.resolve(real_path, follow=False) as found:
        try:
            st = os.stat(found.name, dir_fd=found.parent_fd, follow_symlinks=False)
        except FileNotFoundError:
            raise PathError("not_found", f"file not found: '{shown_path}' does not exist") from None
        is_link = stat.S_ISLNK(st.st_mode)
        target = found.path
        target_st = None
        if is_link:
            resolved = root.realpath(found.path)
            if resolved is not None:
                target_st, metadata = _stat_with_metadata(root, resolved)
                target = resolved
            else:
                metadata = {}
        else:
            fd = os.open(found.name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=found.parent_fd)
            try:
                metadata = read_metadata(f"/proc/self/fd/{fd}")
            finally:
                os.close(fd)
    owner, group = accounts.owner_names(st.st_uid, st.st_gid)
    if is_link:
        kind = _file_type(target_st.st_mode) if target_st is not None else pb.FileType.UNSPECIFIED
        mode = stat.S_IMODE(target_st.st_mode) & 0o777 if target_st is not None else 0
    else:
        kind, mode = _file_type(st.st_mode), st.st_mode & 0o777
    base = shown_path.rstrip("/").rsplit("/", 1)[-1] or "/"
    info = pb.EntryInfo(
        name=base,
        type=kind,
        path=shown_path,
        size=st.st_size,
        mode=mode,
        permissions=go_permissions(st.st_mode),
        owner=owner,
        group=group,
        modified_time=Timestamp.from_nanos(st.st_mtime_ns) if st.st_mtime_ns else None,
        metadata=metadata,
        is_symlink=is_link,
    )
    if is_link:
        info.symlink_target = target
    return info


def _stat_with_metadata(root: SandboxRoot, path: str) -> tuple[os.stat_result | None, dict[str, str]]:
    try:
        with root.resolve(path, follow=True) as found:
            fd = os.open(found.name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=found.parent_fd)
    except (PathError, OSError):
        return None, {}
    try:
        return os.fstat(fd), read_metadata(f"/proc/self/fd/{fd}")
    finally:
        os.close(fd)
