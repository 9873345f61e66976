"""inotify watches: envd's event kinds, recursion into new folders, the bound on folders."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from e2b_local_api.runtime import watch as watch_module
from e2b_local_api.runtime.watch import Watch, WatchError

DEADLINE = 20.0


async def _collect(w: Watch, wanted: set[tuple[str, str]]) -> list[tuple[str, str]]:
    seen: list[tuple[str, str]] = []

    async def read() -> None:
        async for change in w.changes():
            seen.append((change.kind, change.name))
            if wanted <= set(seen):
                return

    await asyncio.wait_for(read(), DEADLINE)
    return seen


def test_kinds_as_envd_names_them(tmp_path: Path) -> None:
    async def run() -> list[tuple[str, str]]:
        w = Watch(str(tmp_path), recursive=False)
        w.start()
        try:
            (tmp_path / "f").write_text("x")
            os.chmod(tmp_path / "f", 0o600)
            os.rename(tmp_path / "f", tmp_path / "g")
            os.unlink(tmp_path / "g")
            return await _collect(
                w, {("create", "f"), ("write", "f"), ("chmod", "f"), ("rename", "f"), ("create", "g"), ("remove", "g")}
            )
        finally:
            w.close()

    seen = asyncio.run(run())
    assert seen.index(("create", "f")) < seen.index(("rename", "f")) < seen.index(("remove", "g"))


def test_recursive_follows_new_folders(tmp_path: Path) -> None:
    async def run() -> list[tuple[str, str]]:
        w = Watch(str(tmp_path), recursive=True)
        w.start()
        try:
            (tmp_path / "d").mkdir()
            # The new folder is watched once its create is read: wait for it, then write inside.
            await _collect(w, {("create", "d")})
            (tmp_path / "d" / "inner").write_text("x")
            return await _collect(w, {("create", "d/inner")})
        finally:
            w.close()

    assert ("create", "d/inner") in asyncio.run(run())


def test_folder_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(3):
        (tmp_path / str(i)).mkdir()
    monkeypatch.setattr(watch_module, "MAX_FOLDERS_PER_WATCH", 2)
    with pytest.raises(WatchError, match="at most 2 folders"):
        Watch(str(tmp_path), recursive=True)


def test_a_missing_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(WatchError):
        Watch(str(tmp_path / "missing"), recursive=False)


def _read(w: Watch) -> list[tuple[str, str]]:
    """What the kernel queued so far, handled as the event loop would (no loop: nothing is read meanwhile)."""
    w._on_readable()
    return [(change.kind, change.name) for change in w.drain()]


def test_recursive_follows_a_tree_made_at_once(tmp_path: Path) -> None:
    w = Watch(str(tmp_path), recursive=True)
    try:
        # mkdir -p: the kernel queues p's create only; q and r exist before p is watched.
        (tmp_path / "p" / "q" / "r").mkdir(parents=True)
        (tmp_path / "p" / "q" / "r" / "f2").write_text("x")
        # As envd's fsnotify: the folder's own event, then a create for each entry found, in WalkDir's order.
        assert _read(w) == [("create", "p"), ("create", "p/q"), ("create", "p/q/r"), ("create", "p/q/r/f2")]
        (tmp_path / "p" / "q" / "r" / "f3").write_text("x")
        assert _read(w) == [("create", "p/q/r/f3"), ("write", "p/q/r/f3")]
    finally:
        w.close()


def test_recursive_follows_a_folder_moved_in(tmp_path: Path) -> None:
    (tmp_path / "out" / "x" / "y").mkdir(parents=True)
    (tmp_path / "out" / "x" / "y" / "f1").write_text("x")
    (tmp_path / "w").mkdir()
    w = Watch(str(tmp_path / "w"), recursive=True)
    try:
        os.rename(tmp_path / "out" / "x", tmp_path / "w" / "x")
        assert _read(w) == [("create", "x"), ("create", "x/y"), ("create", "x/y/f1")]
        (tmp_path / "w" / "x" / "y" / "f4").write_text("x")
        assert _read(w) == [("create", "x/y/f4"), ("write", "x/y/f4")]
    finally:
        w.close()


def test_a_folder_moved_inside_is_renamed_not_walked(tmp_path: Path) -> None:
    (tmp_path / "d" / "e").mkdir(parents=True)
    w = Watch(str(tmp_path), recursive=True)
    try:
        os.rename(tmp_path / "d", tmp_path / "g")
        # envd's fsnotify reports no creates for a folder moved inside the watch: it only renames its watches.
        assert _read(w) == [("rename", "d"), ("create", "g")]
        (tmp_path / "g" / "e" / "f").write_text("x")
        assert _read(w) == [("create", "g/e/f"), ("write", "g/e/f")]
    finally:
        w.close()


def test_an_entry_both_listed_and_queued_is_reported_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    listed = watch_module._entries

    def create_then_list(fd: int) -> list[tuple[str, bool]]:
        # A file made after the folder is watched and before it is listed: listed, and queued by the kernel.
        if os.readlink(f"/proc/self/fd/{fd}") == str(tmp_path / "p"):
            os.close(os.open("late", os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, dir_fd=fd))
        return listed(fd)

    monkeypatch.setattr(watch_module, "_entries", create_then_list)
    w = Watch(str(tmp_path), recursive=True)
    try:
        (tmp_path / "p").mkdir()
        assert _read(w) == [("create", "p"), ("create", "p/late")]
        assert _read(w) == []  # the kernel's create of p/late, read now, is not reported again
        (tmp_path / "p" / "late").unlink()
        (tmp_path / "p" / "late").write_text("x")
        assert _read(w) == [("remove", "p/late"), ("create", "p/late"), ("write", "p/late")]
    finally:
        w.close()


def test_a_folder_moved_out_is_no_longer_watched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "w" / "sub" / "deep").mkdir(parents=True)
    (tmp_path / "out").mkdir()
    monkeypatch.setattr(watch_module, "MAX_FOLDERS_PER_WATCH", 3)  # w, sub, deep
    w = Watch(str(tmp_path / "w"), recursive=True)
    try:
        os.rename(tmp_path / "w" / "sub", tmp_path / "out" / "sub2")
        assert _read(w) == [("rename", "sub")]
        (tmp_path / "out" / "sub2" / "deep" / "OUTSIDE").write_text("x")
        assert _read(w) == []
        # The folders moved out no longer count toward the bound: a new one fits in their place.
        (tmp_path / "w" / "n").mkdir()
        assert _read(w) == [("create", "n")]
        (tmp_path / "w" / "n" / "f").write_text("x")
        assert _read(w) == [("create", "n/f"), ("write", "n/f")]
    finally:
        w.close()


def test_the_watched_folder_removed_is_reported(tmp_path: Path) -> None:
    (tmp_path / "w" / "a").mkdir(parents=True)
    (tmp_path / "w" / "a" / "f").write_text("x")
    w = Watch(str(tmp_path / "w"), recursive=True)
    try:
        shutil.rmtree(tmp_path / "w")
        # As envd's fsnotify: the top's IN_DELETE_SELF is a remove named ".".
        assert _read(w) == [("remove", "a/f"), ("remove", "a"), ("remove", ".")]
        # The watch followed the folder, not its name: a new folder there is not watched (nor by envd).
        (tmp_path / "w").mkdir()
        (tmp_path / "w" / "new").write_text("x")
        assert _read(w) == []
    finally:
        w.close()


def _watched_inodes(w: Watch) -> set[int]:
    """The inodes the kernel watches for `w` (one `inotify wd:N ino:HEX ...` line each)."""
    with open(f"/proc/self/fdinfo/{w._fd}") as fdinfo:
        lines = [line.split() for line in fdinfo if line.startswith("inotify ")]
    return {int(part[4:], 16) for parts in lines for part in parts if part.startswith("ino:")}


def test_a_symlink_swapped_into_a_path_leads_nowhere_outside(tmp_path: Path) -> None:
    root, host = tmp_path / "root", tmp_path / "host"
    (root / "a").mkdir(parents=True)
    (host / "tmp").mkdir(parents=True)
    w = Watch(str(root), recursive=True)
    try:
        # The sandbox's race, made deterministic: a/tmp's create is queued, then a becomes a link to the host
        # before the server reads it. Resolved by name, a/tmp would be the host's tmp.
        (root / "a" / "tmp").mkdir()
        os.rename(root / "a", root / "b")
        os.symlink(host, root / "a")
        _read(w)
        inside = {os.lstat(os.path.join(folder, name)).st_ino for folder, names, _ in os.walk(root) for name in names}
        assert _watched_inodes(w) <= inside | {root.stat().st_ino}
        assert (host / "tmp").stat().st_ino not in _watched_inodes(w)
        (host / "tmp" / "HOST_FILE").write_text("x")
        (root / "b" / "tmp" / "inside").write_text("x")
        assert _read(w) == [("create", "b/tmp/inside"), ("write", "b/tmp/inside")]
    finally:
        w.close()


def test_a_burst_past_the_queue_waits_in_the_kernel_and_none_is_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The cap used to end the watch ("more than N events unread") although its reader was keeping up.
    monkeypatch.setattr(watch_module, "MAX_QUEUED_EVENTS", 10)
    count = 3000  # more than one 64 KiB read of the kernel's queue holds (about 2,000 such events)

    async def run() -> list[str]:
        w = Watch(str(tmp_path), recursive=False)
        w.start()
        try:
            for i in range(count):
                os.mkdir(tmp_path / f"d{i}")
            w._on_readable()
            assert 10 <= w._queue.qsize() < count  # read no further: the rest waits in the kernel's queue
            created = [c.name for c in w.drain()]  # a client catches up: reading goes on
            async for change in w.changes():
                created.append(change.name)
                if len(created) == count:
                    break
            return created
        finally:
            w.close()

    assert asyncio.run(asyncio.wait_for(run(), DEADLINE)) == [f"d{i}" for i in range(count)]


def test_no_inotify_instance_left_is_a_limit_not_a_failure(tmp_path: Path) -> None:
    """Out of inotify instances (the server user's `max_user_instances`, which two sandboxes' watchers can use
    up) is `WatchLimit` (`resource_exhausted`), not an internal error. Reached here the way a process reaches
    it, in a child process whose descriptors are all in use (inotify_init1 answers EMFILE either way)."""
    script = f"""
import resource
from e2b_local_api.runtime.watch import Watch, WatchLimit
resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
held = []
try:
    while True:
        held.append(open("/dev/null"))
except OSError:
    pass
try:
    Watch({str(tmp_path)!r}, recursive=False)
except WatchLimit as error:
    print("limit:", error)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "limit: cannot create an inotify instance: Too many open files\n"
