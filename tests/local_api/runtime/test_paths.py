"""Path confinement, checked against the kernel's own `openat2(RESOLVE_IN_ROOT)` on random trees of links."""

from __future__ import annotations

import ctypes
import errno
import os
import struct
import tempfile
from pathlib import Path

import pytest
from e2b_local_api.runtime.paths import PathError, SandboxRoot, absolute, clean
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ...fuzz_budget import examples

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
SYS_OPENAT2 = 437  # the same number on every Linux architecture (added after the syscall table was unified)
RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_IN_ROOT = 0x10


def kernel_resolve(root: Path, path: str, *, follow: bool) -> str | int:
    """The sandbox path the kernel resolves `path` to inside `root`, or the errno it fails with."""
    how = struct.pack(
        "QQQ", os.O_PATH | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW), 0, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS
    )
    buf = ctypes.create_string_buffer(how)
    root_fd = os.open(root, os.O_PATH | os.O_DIRECTORY)
    try:
        # EAGAIN: a rename anywhere on the machine raced a ".." walk; the kernel asks for a retry.
        for _ in range(1000):
            fd = _libc.syscall(SYS_OPENAT2, root_fd, os.fsencode(path.lstrip("/") or "."), buf, len(how))
            if fd >= 0 or ctypes.get_errno() != errno.EAGAIN:
                break
        if fd < 0:
            return ctypes.get_errno()
        try:
            host = os.readlink(f"/proc/self/fd/{fd}")
        finally:
            os.close(fd)
    finally:
        os.close(root_fd)
    real_root = os.path.realpath(root)
    assert host == real_root or host.startswith(real_root + "/"), f"the kernel itself left the root: {host}"
    return "/" + os.path.relpath(host, real_root) if host != real_root else "/"


def ours(root: Path, path: str, *, follow: bool) -> str | int:
    """Our walk's answer in the kernel's terms: the resolved path if it exists, else the errno it means."""
    try:
        with SandboxRoot(root).resolve(path, follow=follow) as found:
            try:
                os.stat(found.name, dir_fd=found.parent_fd, follow_symlinks=False)
            except FileNotFoundError:
                return errno.ENOENT
            return found.path
    except PathError as error:
        return {"not_found": errno.ENOENT, "failed_precondition": errno.ELOOP, "invalid_argument": errno.ENOTDIR}[
            error.kind
        ]


def _kernel_has_openat2() -> bool:
    with tempfile.TemporaryDirectory() as folder:
        return kernel_resolve(Path(folder), "/", follow=True) == "/"


needs_openat2 = pytest.mark.skipif(
    not _kernel_has_openat2(), reason="this kernel has no openat2 (Linux < 5.6 or filtered)"
)

NAMES = ["a", "b", "c", "..", ".", "link", "loop", "up", "file", "etc", "passwd"]
TARGETS = [
    "/",
    "..",
    "../..",
    "../../..",
    "/a",
    "a/b",
    "/a/b/file",
    "../a",
    "link",
    "/link",
    "loop",
    "b/../../..",
    "/etc/passwd",
    "../../../etc",
    "file",
    "/a/link/a",
]


LINK_PLACES = ["/link", "/a/link", "/a/b/link", "/a/up", "/a/b/loop", "/etc/up"]


@st.composite
def trees(draw: st.DrawFn) -> list[tuple[str, str, str]]:
    """(kind, path, link target) entries: folders and files under a/b, links in fixed places with tricky targets."""
    entries = [
        ("dir", "/a", ""),
        ("dir", "/a/b", ""),
        ("file", "/a/b/file", ""),
        ("dir", "/etc", ""),
        ("file", "/etc/passwd", ""),
    ]
    for place in LINK_PLACES:
        target = draw(st.none() | st.sampled_from(TARGETS))
        if target is not None:
            entries.append(("link", place, target))
    return entries


def build(root: Path, entries: list[tuple[str, str, str]]) -> None:
    for kind, path, target in entries:
        host = root / path.lstrip("/")
        if host.exists() or host.is_symlink():
            continue
        if kind == "dir":
            host.mkdir(parents=True)
        elif kind == "file":
            host.write_text("inside")
        elif host.parent.is_dir() and not host.parent.is_symlink():
            os.symlink(target, host)


def all_paths(depth: int) -> list[str]:
    paths = [""]
    frontier = [""]
    for _ in range(depth):
        frontier = [f"{p}/{n}" if p else n for p in frontier for n in NAMES]
        paths += frontier
    return paths


PATHS = all_paths(3)


@needs_openat2
@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=trees())
def test_walk_agrees_with_openat2_resolve_in_root(
    tmp_path_factory: pytest.TempPathFactory, entries: list[tuple[str, str, str]]
) -> None:
    """Every path of up to three names, through a random set of links: our answer is the kernel's."""
    root = tmp_path_factory.mktemp("root")
    build(root, entries)
    for text in PATHS:
        for follow in (True, False):
            kernel = kernel_resolve(root, text, follow=follow)
            mine = ours(root, "/" + text, follow=follow)
            if isinstance(kernel, int) and kernel != errno.ENOENT:
                # ELOOP and ENOTDIR: we refuse too (the exact errno may differ where both apply).
                assert isinstance(mine, int), (text, follow, kernel, mine, entries)
            else:
                assert mine == kernel, (text, follow, entries)


def test_links_out_of_the_root_land_inside(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    (root / "etc" / "passwd").write_text("sandbox")
    (root / "home" / "user").mkdir(parents=True)
    os.symlink("/", root / "home" / "user" / "toroot")
    os.symlink("../../../../../../etc/passwd", root / "home" / "user" / "pw")
    os.symlink(str(tmp_path), root / "home" / "user" / "host")
    sandbox = SandboxRoot(root)
    for path, expected in (
        ("/home/user/toroot/etc/passwd", "/etc/passwd"),
        ("/home/user/pw", "/etc/passwd"),
        ("/../../etc/passwd", "/etc/passwd"),
        ("/home/user/toroot/../../..", "/"),
    ):
        with sandbox.resolve(path) as found:
            assert found.path == expected
    # An absolute link names a sandbox path: the host's folder of that name is not reached.
    with pytest.raises(PathError) as caught:
        sandbox.resolve("/home/user/host/root/etc/passwd")
    assert caught.value.kind == "not_found"


def test_loops_are_refused(tmp_path: Path) -> None:
    os.symlink("b", tmp_path / "a")
    os.symlink("a", tmp_path / "b")
    with pytest.raises(PathError) as caught:
        SandboxRoot(tmp_path).resolve("/a/x")
    assert caught.value.kind == "failed_precondition"


def test_missing_parents_are_made_when_asked(tmp_path: Path) -> None:
    os.symlink("/", tmp_path / "up")
    with SandboxRoot(tmp_path).resolve("/up/new/deeper/file", create_parents=(os.geteuid(), os.getegid())) as found:
        assert found.path == "/new/deeper/file" and found.name == "file"
    assert (tmp_path / "new" / "deeper").is_dir()


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("a.txt", "/home/user/a.txt"),
        ("~", "/home/user"),
        ("~/x/../y", "/home/user/y"),
        ("../../etc/passwd", "/etc/passwd"),
        ("/a//b/./c/", "/a/b/c"),
    ],
)
def test_absolute(raw: str, expected: str) -> None:
    assert absolute(raw, "/home/user") == expected


def test_absolute_refuses_nul_and_other_homes() -> None:
    for raw in ("a\0b", "~root/x"):
        with pytest.raises(PathError) as caught:
            absolute(raw, "/home/user")
        assert caught.value.kind == "invalid_argument"


@given(st.lists(st.sampled_from(["a", "..", ".", "", "b"]), max_size=10))
def test_clean_never_climbs_above_the_root(parts: list[str]) -> None:
    cleaned = clean("/" + "/".join(parts))
    assert cleaned.startswith("/") and ".." not in cleaned.split("/") and "//" not in cleaned
