"""`sbx.files` (async flavour): real files in the test's tmp dir, through a real Connect envd and its /files."""

from __future__ import annotations

import asyncio
import io
import os
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from e2b import (
    AsyncSandbox,
    EntryInfo,
    FileNotFoundException,
    FilesystemEvent,
    FilesystemEventType,
    FileType,
    InvalidArgumentException,
    SandboxNotRunningException,
    TemplateException,
    TimeoutException,
    WriteEntry,
    WriteInfo,
)

from ._envd_server import EnvdServer
from .conftest import sandbox

pytestmark = pytest.mark.anyio


async def _chunks(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        await asyncio.sleep(0)
        yield part


@pytest.mark.parametrize("gzip", [False, True])
async def test_every_kind_of_data_writes_and_reads_back(sbx: AsyncSandbox, tmp_path: Path, gzip: bool) -> None:
    cases: list[tuple[object, bytes]] = [
        ("héllo", "héllo".encode()),
        (b"\x00\xffbytes", b"\x00\xffbytes"),
        (io.BytesIO(b"binary file" * 100_000), b"binary file" * 100_000),
        (io.StringIO("text file é"), "text file é".encode()),
        (_chunks(b"it", b"er", b"able"), b"iterable"),
        (b"", b""),
    ]
    for index, (data, expected) in enumerate(cases):
        path = str(tmp_path / "sub" / f"f{index}")
        info = await sbx.files.write(path, data, gzip=gzip)  # type: ignore[arg-type]
        assert info == WriteInfo(name=f"f{index}", type=FileType.FILE, path=path)
        assert Path(path).read_bytes() == expected
        assert await sbx.files.read(path, format="bytes", gzip=gzip) == bytearray(expected)
        assert await sbx.files.read(path, gzip=gzip) == expected.decode("utf-8", "replace")


async def test_a_stream_read_comes_in_chunks(sbx: AsyncSandbox, tmp_path: Path) -> None:
    path = tmp_path / "big"
    path.write_bytes(os.urandom(3 << 20))
    received = bytearray()
    chunks = 0
    async with await sbx.files.read(str(path), format="stream") as stream:
        async for chunk in stream:
            received += chunk
            chunks += 1
    assert bytes(received) == path.read_bytes()
    assert chunks > 1


@pytest.mark.parametrize("gzip", [False, True])
async def test_a_file_of_many_chunks_reads_back_whole(sbx: AsyncSandbox, tmp_path: Path, gzip: bool) -> None:
    # Many chunks go into the one bytearray `read` returns: none lost, doubled or reordered,
    # and text decoded once whole (a character split between two chunks stays one character).
    noise = os.urandom(5 << 20)
    text = "ünïcödé line\n" * 400_000  # some 5.6 MB, compressible
    (tmp_path / "noise").write_bytes(noise)
    (tmp_path / "text").write_text(text, encoding="utf-8")
    got = await sbx.files.read(str(tmp_path / "noise"), format="bytes", gzip=gzip)
    assert type(got) is bytearray and got == noise
    assert await sbx.files.read(str(tmp_path / "text"), gzip=gzip) == text
    as_bytes = await sbx.files.read(str(tmp_path / "text"), format="bytes", gzip=gzip)
    assert as_bytes == text.encode("utf-8")


async def test_a_stalled_stream_ends_at_its_idle_timeout(sbx: AsyncSandbox, tmp_path: Path, envd: EnvdServer) -> None:
    path = tmp_path / "stalled"
    path.write_bytes(b"0123456789" * 10)
    envd.faults.stall_download = True
    stream = await sbx.files.read(str(path), format="stream", stream_idle_timeout=0.5)
    assert await stream.__anext__() == b"0123456789"
    with anyio.fail_after(20), pytest.raises(TimeoutException, match="stalled"):
        await stream.__anext__()
    with pytest.raises(InvalidArgumentException, match="stream_idle_timeout"):
        await sbx.files.read(str(path), format="stream", stream_idle_timeout=-1)


async def test_a_stream_cut_short_raises_the_sdks_exception(
    sbx: AsyncSandbox, tmp_path: Path, envd: EnvdServer
) -> None:
    # As the local server ends a paused or killed sandbox's download: /health then says which.
    path = tmp_path / "cut"
    path.write_bytes(b"0123456789" * 10)
    envd.faults.cut_download = True
    envd.faults.health = (502, b'{"message": "sandbox sbxtest was not found"}')
    stream = await sbx.files.read(str(path), format="stream")
    assert await stream.__anext__() == b"0123456789"
    with anyio.fail_after(20), pytest.raises(SandboxNotRunningException):
        await stream.__anext__()


async def test_metadata_is_stored_and_listed(sbx: AsyncSandbox, tmp_path: Path, envd: EnvdServer) -> None:
    path = str(tmp_path / "labelled")
    info = await sbx.files.write(path, "x", metadata={"owner-team": "data"})
    assert info.metadata == {"owner-team": "data"}
    assert (await sbx.files.get_info(path)).metadata == {"owner-team": "data"}
    assert envd.app.requests[-2][2]["x-metadata-owner-team"] == "data"
    for bad in ({"bad key": "v"}, {"k": "é"}, {"k": "a\nb"}):
        with pytest.raises(InvalidArgumentException, match="metadata"):
            await sbx.files.write(path, "x", metadata=bad)


async def test_write_files_writes_each(sbx: AsyncSandbox, tmp_path: Path) -> None:
    files = [WriteEntry(path=str(tmp_path / "a"), data="A"), WriteEntry(path=str(tmp_path / "b"), data=b"B")]
    infos = await sbx.files.write_files(files)
    assert [i.name for i in infos] == ["a", "b"]
    assert (tmp_path / "a").read_text() == "A" and (tmp_path / "b").read_text() == "B"
    assert await sbx.files.write_files([]) == []


async def test_an_old_envd_gets_multipart_and_refuses_what_it_cannot_do(envd: EnvdServer, tmp_path: Path) -> None:
    old = sandbox(envd, envd_version="0.5.0")
    infos = await old.files.write_files(
        [
            WriteEntry(path=str(tmp_path / "m1"), data="one"),
            WriteEntry(path=str(tmp_path / "m2"), data=io.BytesIO(b"2")),
        ]
    )
    assert {i.path for i in infos} == {str(tmp_path / "m1"), str(tmp_path / "m2")}
    assert (tmp_path / "m2").read_bytes() == b"2"
    with pytest.raises(TemplateException, match="iterable"):
        await old.files.write(str(tmp_path / "m3"), _chunks(b"x"))
    with pytest.raises(TemplateException, match="metadata"):
        await old.files.write(str(tmp_path / "m4"), "x", metadata={"a": "b"})


async def test_entries_are_described_as_e2b_2_describes_them(sbx: AsyncSandbox, tmp_path: Path) -> None:
    (tmp_path / "dir" / "deep").mkdir(parents=True)
    (tmp_path / "dir" / "file").write_bytes(b"12345")
    (tmp_path / "dir" / "deep" / "inner").write_bytes(b"")
    os.symlink(tmp_path / "dir" / "file", tmp_path / "dir" / "link")
    info = await sbx.files.get_info(str(tmp_path / "dir" / "file"))
    assert isinstance(info, EntryInfo)
    assert (info.name, info.type, info.size, info.path) == ("file", FileType.FILE, 5, str(tmp_path / "dir" / "file"))
    assert info.permissions.startswith("-rw") and info.mode & 0o600 == 0o600
    assert info.owner and info.group and info.modified_time.year >= 2024
    assert (info.symlink_target, info.is_symlink, info.metadata) == (None, False, None)
    link = await sbx.files.get_info(str(tmp_path / "dir" / "link"))
    assert (link.type, link.is_symlink, link.symlink_target) == (FileType.SYMLINK, True, str(tmp_path / "dir" / "file"))
    top = await sbx.files.list(str(tmp_path / "dir"))
    assert sorted(e.name for e in top) == ["deep", "file", "link"]
    assert {e.name: e.type for e in top}["deep"] is FileType.DIR
    deep = await sbx.files.list(str(tmp_path / "dir"), depth=2)
    assert "inner" in {e.name for e in deep}
    with pytest.raises(InvalidArgumentException, match="depth"):
        await sbx.files.list(str(tmp_path), depth=0)


async def test_make_rename_remove_exists(sbx: AsyncSandbox, tmp_path: Path) -> None:
    folder = str(tmp_path / "new" / "nested")
    assert await sbx.files.make_dir(folder) is True
    assert await sbx.files.make_dir(folder) is False
    assert await sbx.files.exists(folder) is True
    moved = await sbx.files.rename(folder, str(tmp_path / "moved"))
    assert (moved.name, moved.type) == ("moved", FileType.DIR)
    assert await sbx.files.exists(folder) is False
    await sbx.files.remove(str(tmp_path / "moved"))
    assert not (tmp_path / "moved").exists()


async def test_missing_paths_raise_file_not_found(sbx: AsyncSandbox, tmp_path: Path) -> None:
    missing = str(tmp_path / "nope")
    for call in (
        sbx.files.read(missing),
        sbx.files.get_info(missing),
        sbx.files.list(missing),
        sbx.files.remove(missing),
        sbx.files.rename(missing, str(tmp_path / "x")),
    ):
        with pytest.raises(FileNotFoundException):
            await call


@pytest.mark.parametrize("path", ["", "/tmp/a\x00b", 3])
async def test_bad_paths_are_refused_before_any_request(sbx: AsyncSandbox, envd: EnvdServer, path: object) -> None:
    for call in (
        lambda: sbx.files.read(path),  # type: ignore[call-overload]
        lambda: sbx.files.write(path, "x"),  # type: ignore[arg-type]
        lambda: sbx.files.exists(path),  # type: ignore[arg-type]
        lambda: sbx.files.watch_dir(path, on_event=print),  # type: ignore[arg-type]
    ):
        with pytest.raises(InvalidArgumentException, match="path"):
            await call()
    assert envd.app.requests == []


async def test_unsupported_data_is_refused(sbx: AsyncSandbox, tmp_path: Path) -> None:
    with pytest.raises(InvalidArgumentException, match="data"):
        await sbx.files.write(str(tmp_path / "n"), 12)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentException, match="bytes chunks"):
        await sbx.files.write(str(tmp_path / "n"), _chunks(b"a", "b"))  # type: ignore[arg-type]


class _ProducerFailed(Exception):
    """The caller's own failure, raised by the data it hands to `files.write`."""


class _BrokenFile(io.RawIOBase):
    def readable(self) -> bool:
        return True

    def readinto(self, buffer: object) -> int:
        raise _ProducerFailed("the file's read failed")


async def test_the_data_producers_own_exception_reaches_the_caller_as_itself(sbx: AsyncSandbox, tmp_path: Path) -> None:
    async def broken() -> AsyncIterator[bytes]:
        yield b"first chunk"
        raise _ProducerFailed("the generator broke")

    with pytest.raises(_ProducerFailed, match="generator broke"):
        await sbx.files.write(str(tmp_path / "g"), broken())
    with pytest.raises(_ProducerFailed, match="read failed"):
        await sbx.files.write(str(tmp_path / "f"), io.BufferedReader(_BrokenFile()))


async def test_watch_dir_streams_changes_to_callbacks(sbx: AsyncSandbox, tmp_path: Path) -> None:
    events: list[FilesystemEvent] = []
    ended: list[Exception | None] = []
    handle = await sbx.files.watch_dir(str(tmp_path), on_event=events.append, on_exit=ended.append, include_entry=True)
    (tmp_path / "created").write_text("x")
    with anyio.fail_after(30):
        while not any(e.type is FilesystemEventType.CREATE and e.name == "created" for e in events):
            await asyncio.sleep(0.01)
    created = next(e for e in events if e.name == "created")
    assert created.entry is not None and created.entry.name == "created"
    await handle.stop()
    assert ended == [None]


async def test_watch_dir_on_a_missing_folder_or_a_file(sbx: AsyncSandbox, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundException):
        await sbx.files.watch_dir(str(tmp_path / "absent"), on_event=print)
    (tmp_path / "plain").write_text("x")
    with pytest.raises(InvalidArgumentException, match="not a directory"):
        await sbx.files.watch_dir(str(tmp_path / "plain"), on_event=print)


async def test_watch_features_are_gated_by_envd_version(envd: EnvdServer, tmp_path: Path) -> None:
    old = sandbox(envd, envd_version="0.1.0")
    for flag in ("recursive", "include_entry", "allow_network_mounts"):
        with pytest.raises(TemplateException, match=flag):
            await old.files.watch_dir(str(tmp_path), on_event=print, **{flag: True})  # type: ignore[arg-type]
