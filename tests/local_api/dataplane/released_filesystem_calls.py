"""The released `e2b`'s filesystem calls against a local envd; run by its own interpreter, one group per run.

`python -I released_filesystem_calls.py URL SANDBOX_ID TOKEN SANDBOX_ROOT GROUP` prints one JSON line: the
group and how many calls of each kind it made. SANDBOX_ROOT is the sandbox's host folder, where the
script plants what a process inside would (links): this interpreter has only the released SDK. `e2b`
is loaded at run time (typed Any), so that mypy does not check this file against this repository's SDK.
"""

from __future__ import annotations

import asyncio
import importlib
import io
import json
import os
import sys
import time
import warnings
from collections import Counter
from typing import Any

import httpx

e2b: Any = importlib.import_module("e2b")
errors: Any = importlib.import_module("e2b.exceptions")
Version: Any = importlib.import_module("packaging.version").Version
AsyncSandbox, ConnectionConfig, FileType, Sandbox = e2b.AsyncSandbox, e2b.ConnectionConfig, e2b.FileType, e2b.Sandbox
FileNotFoundException, InvalidArgumentException = errors.FileNotFoundException, errors.InvalidArgumentException
SandboxException = errors.SandboxException
FilesystemEventType: Any = importlib.import_module("e2b.sandbox.filesystem.watch_handle").FilesystemEventType

URL, SANDBOX_ID, TOKEN, ROOT, GROUP = sys.argv[1:6]
HOME = "/home/user"
DEADLINE = 20.0
calls: Counter[str] = Counter()


def opts() -> dict[str, Any]:
    headers = {"E2b-Sandbox-Id": SANDBOX_ID, "E2b-Sandbox-Port": "49983"}
    if TOKEN != "-":
        headers["X-Access-Token"] = TOKEN
    config = ConnectionConfig(
        api_key="e2b_" + "0" * 40, sandbox_url=URL, extra_sandbox_headers=headers, request_timeout=30
    )
    return dict(
        sandbox_id=SANDBOX_ID,
        sandbox_domain=None,
        envd_version=Version("0.6.4"),
        envd_access_token=None if TOKEN == "-" else TOKEN,
        traffic_access_token=None,
        connection_config=config,
    )


def host(path: str) -> str:
    return os.path.join(ROOT, path.lstrip("/"))


def expect(exception: type[BaseException], kind: str, call: Any) -> None:
    try:
        call()
    except exception:
        calls[kind] += 1
        return
    raise AssertionError(f"{kind}: {exception.__name__} not raised")


def files_sync() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        sbx = Sandbox(**opts())
    f = sbx.files
    # write: str, bytes, binary IO, text IO, an iterable, gzip, metadata; many at once
    assert f.write("a.txt", "text").path == f"{HOME}/a.txt"
    f.write("b.bin", b"\x00\x01")
    f.write("io.bin", io.BytesIO(b"from io"))
    f.write("text-io.txt", io.StringIO("text io"))
    f.write("iter.bin", iter([b"chunk1", b"chunk2"]))
    f.write("gz.txt", "zipped" * 1000, gzip=True)
    info = f.write("meta.txt", "m", metadata={"Team": "infra"})
    assert info.metadata == {"team": "infra"}, info
    calls["write"] += 7
    many = f.write_files([{"path": "many/1.txt", "data": "one"}, {"path": "/tmp/2.txt", "data": b"two"}])
    assert [w.path for w in many] == [f"{HOME}/many/1.txt", "/tmp/2.txt"]
    calls["write_files"] += 1
    # read: text, bytes, stream, gzip
    assert f.read("a.txt") == "text"
    assert f.read("b.bin", format="bytes") == bytearray(b"\x00\x01")
    with f.read("iter.bin", format="stream") as stream:
        assert b"".join(stream) == b"chunk1chunk2"
    assert f.read("gz.txt", gzip=True) == "zipped" * 1000
    assert f.read("io.bin") == "from io" and f.read("text-io.txt") == "text io"
    calls["read"] += 6
    # list with depth, exists, get_info (with metadata and symlinks)
    assert {e.name for e in f.list("many")} == {"1.txt"}
    deep = [e.path for e in f.list(HOME, depth=2)]
    assert f"{HOME}/many/1.txt" in deep and f"{HOME}/many" in deep
    calls["list"] += 2
    assert f.exists("a.txt") and not f.exists("nope")
    calls["exists"] += 2
    assert f.get_info("meta.txt").metadata == {"team": "infra"}
    os.symlink("a.txt", host(f"{HOME}/link"))
    os.symlink("/", host(f"{HOME}/rootlink"))
    link = f.get_info("link")
    assert link.type == FileType.SYMLINK and link.symlink_target == f"{HOME}/a.txt", link
    to_root = f.get_info("rootlink")
    assert to_root.type == FileType.SYMLINK and to_root.symlink_target == "/"
    assert f.get_info("a.txt").type == FileType.FILE and f.get_info("many").type == FileType.DIR
    calls["get_info"] += 5
    # make_dir, rename, remove
    assert f.make_dir("new/dir") is True and f.make_dir("new/dir") is False
    calls["make_dir"] += 2
    renamed = f.rename("a.txt", "new/dir/a.txt")
    assert renamed.path == f"{HOME}/new/dir/a.txt" and not f.exists("a.txt")
    calls["rename"] += 1
    f.remove("new")
    f.remove("never-was")
    assert not f.exists("new")
    calls["remove"] += 2
    # errors and paths outside the sandbox
    expect(FileNotFoundException, "read_missing", lambda: f.read("missing.txt"))
    expect(FileNotFoundException, "get_info_missing", lambda: f.get_info("missing.txt"))
    expect(FileNotFoundException, "list_missing", lambda: f.list("missing-dir"))
    expect(InvalidArgumentException, "nul_path", lambda: f.get_info("a\0b"))
    expect(InvalidArgumentException, "read_a_folder", lambda: f.read("many"))
    passwd = open(host("/etc/passwd")).read()
    assert f.read("../../etc/passwd") == passwd and f.read("rootlink/etc/passwd") == passwd
    expect(FileNotFoundException, "proc_environ", lambda: f.read("/proc/1/environ"))
    calls["read_outside"] += 2
    # watch_dir, recursive, with entries
    f.make_dir("watched/sub")
    handle = f.watch_dir("watched", recursive=True, include_entry=True)
    f.write("watched/sub/new.txt", "x")
    seen: list[Any] = []
    deadline = time.monotonic() + DEADLINE
    while not any(e.name == "sub/new.txt" and e.type == FilesystemEventType.WRITE for e in seen):
        assert time.monotonic() < deadline, seen
        seen += handle.get_new_events()
        time.sleep(0.05)
    created = next(e for e in seen if e.type == FilesystemEventType.CREATE)
    assert created.entry is not None and created.entry.path == f"{HOME}/watched/sub/new.txt"
    handle.stop()
    calls["watch_dir_sync"] += 1


def signed_urls() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        sbx = Sandbox(**opts())
    up = sbx.upload_url("signed.txt", use_signature_expiration=60)
    assert "signature=v1_" in up
    r = httpx.post(up, files={"file": ("signed.txt", b"via url")})
    assert r.status_code == 200, r.text
    down = sbx.download_url("signed.txt")
    assert httpx.get(down).text == "via url"
    wrong = down.replace("signature=v1_", "signature=v1_x")
    assert httpx.get(wrong).status_code == 401
    calls["upload_url"] += 1
    calls["download_url"] += 2
    assert sbx.files.read("signed.txt") == "via url"
    calls["read"] += 1


async def files_async() -> None:
    sbx = AsyncSandbox(**opts())
    f = sbx.files
    await f.write("async.txt", "async")
    assert await f.read("async.txt") == "async"
    assert "async.txt" in [e.name for e in await f.list(HOME)]
    calls["async_calls"] += 3
    await f.make_dir("aw/sub")
    events: list[Any] = []
    got = asyncio.Event()

    def on_event(event: Any) -> None:
        events.append(event)
        if event.name == "sub/x.txt" and event.type == FilesystemEventType.WRITE:
            got.set()

    handle = await f.watch_dir("aw", on_event, recursive=True)
    await f.write("aw/sub/x.txt", "x")
    await asyncio.wait_for(got.wait(), DEADLINE)
    await handle.stop()
    calls["watch_dir_async"] += 1


def gone() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        sbx = Sandbox(**opts())
    assert sbx.is_running() is False
    calls["is_running_gone"] += 1
    try:
        sbx.files.read("a.txt")
    except SandboxException as error:
        assert "was not found" in str(error), error
        calls["read_gone"] += 1
    else:
        raise AssertionError("read of a gone sandbox did not fail")


if GROUP == "files":
    files_sync()
elif GROUP == "signed":
    signed_urls()
elif GROUP == "async":
    asyncio.run(files_async())
elif GROUP == "gone":
    gone()
else:
    raise SystemExit(f"unknown group {GROUP}")
print(json.dumps({"group": GROUP, "calls": dict(calls)}), flush=True)
# No interpreter finalization, as in tests/conformance/released_calls.py: the released AsyncWatchHandle.stop()
# cancels its reader without closing the stream under it, so pyqwest's read stays in flight; an event that
# lands as the interpreter shuts down makes pyqwest's worker thread call into it, and Python 3.11 aborts
# (SIGABRT, about one run in 40 here). Every check has passed by now. This repository's SDK closes the stream.
os._exit(0)
