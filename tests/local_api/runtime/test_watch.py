"""inotify watches: envd's event kinds, recursion into new folders, the bound on folders."""

from __future__ import annotations

import asyncio
import os
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
