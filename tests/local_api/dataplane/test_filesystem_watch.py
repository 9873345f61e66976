"""WatchDir streams and CreateWatcher watchers over real HTTP: event kinds, recursion, entries, endings."""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from connectrpc.code import Code
from connectrpc.errors import ConnectError
from e2b_local_api.dataplane import filesystem as service
from e2b_local_api.wire.envd.filesystem import filesystem_pb as pb

from .conftest import Envd, StandInSandbox, headers_for

DEADLINE = 20.0
HOME = "/home/user"


class Stream:
    """A WatchDir stream read on a thread; `until(...)` waits for a condition on what arrived."""

    def __init__(self, responses: Iterator[pb.WatchDirResponse]) -> None:
        self.items: list[pb.WatchDirResponse] = []
        self.error: BaseException | None = None
        self.ended = threading.Event()
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._read, args=(responses,), daemon=True)
        self._thread.start()

    def _read(self, responses: Iterator[pb.WatchDirResponse]) -> None:
        try:
            for item in responses:
                with self._changed:
                    self.items.append(item)
                    self._changed.notify_all()
        except BaseException as error:
            self.error = error
        finally:
            self.ended.set()
            with self._changed:
                self._changed.notify_all()

    def fs_events(self) -> list[pb.FilesystemEvent]:
        return [
            i.event.value for i in self.items if i.event is not None and isinstance(i.event.value, pb.FilesystemEvent)
        ]

    def events(self) -> list[tuple[str, pb.EventType]]:
        return [(e.name, e.type) for e in self.fs_events()]

    def until(self, condition: Callable[[], bool]) -> None:
        deadline = time.monotonic() + DEADLINE
        with self._changed:
            while not condition():
                left = deadline - time.monotonic()
                if left <= 0 or self.ended.is_set():
                    raise AssertionError(f"not seen in time: events {self.events()}, error {self.error!r}")
                self._changed.wait(left)


def watch(envd: Envd, sandbox: StandInSandbox, path: str, **options: bool) -> Stream:
    responses = envd.rpc().watch_dir(pb.WatchDirRequest(path=path, **options), headers=headers_for(sandbox))
    stream = Stream(responses)
    stream.until(lambda: len(stream.items) >= 1)
    first = stream.items[0]
    assert first.event is not None and first.event.field == "start"
    return stream


def test_watch_dir_starts_then_reports_each_kind(envd: Envd, sandbox: StandInSandbox) -> None:
    folder = sandbox.host(f"{HOME}/w")
    folder.mkdir()
    stream = watch(envd, sandbox, "w")
    (folder / "f").write_text("one")
    stream.until(lambda: ("f", pb.EventType.WRITE) in stream.events())
    os.chmod(folder / "f", 0o600)
    stream.until(lambda: ("f", pb.EventType.CHMOD) in stream.events())
    os.rename(folder / "f", folder / "g")
    stream.until(
        lambda: ("f", pb.EventType.RENAME) in stream.events() and ("g", pb.EventType.CREATE) in stream.events()
    )
    os.unlink(folder / "g")
    stream.until(lambda: ("g", pb.EventType.REMOVE) in stream.events())
    assert stream.events()[0] == ("f", pb.EventType.CREATE)


def test_watch_dir_recursive_follows_new_folders(envd: Envd, sandbox: StandInSandbox) -> None:
    folder = sandbox.host(f"{HOME}/r")
    (folder / "old").mkdir(parents=True)
    stream = watch(envd, sandbox, "r", recursive=True)
    (folder / "old" / "a").write_text("x")
    stream.until(lambda: ("old/a", pb.EventType.CREATE) in stream.events())
    (folder / "new").mkdir()
    stream.until(lambda: ("new", pb.EventType.CREATE) in stream.events())
    (folder / "new" / "b").write_text("y")
    stream.until(lambda: ("new/b", pb.EventType.WRITE) in stream.events())


def test_watch_dir_not_recursive_ignores_subfolders(envd: Envd, sandbox: StandInSandbox) -> None:
    folder = sandbox.host(f"{HOME}/flat")
    (folder / "sub").mkdir(parents=True)
    stream = watch(envd, sandbox, "flat")
    (folder / "sub" / "hidden").write_text("x")
    (folder / "seen").write_text("y")
    stream.until(lambda: ("seen", pb.EventType.CREATE) in stream.events())
    assert all(not name.startswith("sub/") for name, _ in stream.events())


def test_watch_dir_include_entry(envd: Envd, sandbox: StandInSandbox) -> None:
    folder = sandbox.host(f"{HOME}/e")
    folder.mkdir()
    stream = watch(envd, sandbox, "e", include_entry=True)
    (folder / "f").write_text("abc")
    stream.until(lambda: ("f", pb.EventType.WRITE) in stream.events())
    write = next(e for e in stream.fs_events() if e.type == pb.EventType.WRITE)
    assert write.entry is not None and write.entry.path == f"{HOME}/e/f" and write.entry.type == pb.FileType.FILE
    os.unlink(folder / "f")
    stream.until(lambda: ("f", pb.EventType.REMOVE) in stream.events())
    removed = next(e for e in stream.fs_events() if e.type == pb.EventType.REMOVE)
    assert removed.entry is None


@pytest.mark.parametrize("state", ["paused", "gone"])
def test_watch_dir_ends_canceled_on_pause_or_kill(
    envd: Envd, sandbox: StandInSandbox, state: Literal["paused", "gone"]
) -> None:
    stream = watch(envd, sandbox, "~")
    sandbox.set_state(state)
    assert stream.ended.wait(DEADLINE)
    assert isinstance(stream.error, ConnectError) and stream.error.code == Code.CANCELED
    assert ("paused" if state == "paused" else "killed") in stream.error.message


def test_watch_dir_errors(envd: Envd, sandbox: StandInSandbox) -> None:
    sandbox.host(f"{HOME}/file").write_text("x")
    rpc = envd.rpc()
    for path, code in (("missing", Code.NOT_FOUND), ("file", Code.INVALID_ARGUMENT), ("a\0", Code.INVALID_ARGUMENT)):
        with pytest.raises(ConnectError) as caught:
            list(rpc.watch_dir(pb.WatchDirRequest(path=path), headers=headers_for(sandbox)))
        assert caught.value.code == code, path


def test_watch_dir_keepalive(envd: Envd, sandbox: StandInSandbox) -> None:
    responses = envd.rpc().watch_dir(
        pb.WatchDirRequest(path="~"), headers={**headers_for(sandbox), "Keepalive-Ping-Interval": "1"}
    )
    stream = Stream(responses)
    stream.until(lambda: any(i.event and i.event.field == "keepalive" for i in stream.items))
    # A keepalive does not end the watch: a change after it still arrives.
    sandbox.host(f"{HOME}/after-keepalive").write_text("x")
    stream.until(lambda: ("after-keepalive", pb.EventType.CREATE) in stream.events())
    assert stream.error is None and not stream.ended.is_set()
    sandbox.set_state("gone")
    assert stream.ended.wait(DEADLINE)


def test_a_closed_stream_frees_its_watch(envd: Envd, sandbox: StandInSandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(service, "MAX_WATCHES_PER_SANDBOX", 1)
    responses = envd.rpc().watch_dir(pb.WatchDirRequest(path="~"), headers=headers_for(sandbox))
    first = next(iter(responses))
    assert first.event is not None and first.event.field == "start"
    responses.close()  # type: ignore[attr-defined]
    # The place is free again once the server has seen the client go: well before any keepalive.
    deadline = time.monotonic() + DEADLINE
    while True:
        try:
            watcher = envd.rpc().create_watcher(pb.CreateWatcherRequest(path="~"), headers=headers_for(sandbox))
            break
        except ConnectError as error:
            assert error.code == Code.RESOURCE_EXHAUSTED and time.monotonic() < deadline, error
            time.sleep(0.05)
    envd.rpc().remove_watcher(pb.RemoveWatcherRequest(watcher_id=watcher.watcher_id), headers=headers_for(sandbox))


def _poll_until(
    envd: Envd, sandbox: StandInSandbox, watcher_id: str, wanted: tuple[str, pb.EventType]
) -> list[pb.FilesystemEvent]:
    seen: list[pb.FilesystemEvent] = []
    deadline = time.monotonic() + DEADLINE
    while (wanted[0], wanted[1]) not in [(e.name, e.type) for e in seen]:
        assert time.monotonic() < deadline, f"not seen: {wanted}; got {seen}"
        got = envd.rpc().get_watcher_events(
            pb.GetWatcherEventsRequest(watcher_id=watcher_id), headers=headers_for(sandbox)
        )
        seen.extend(got.events)
        if not got.events:
            time.sleep(0.05)  # a poll interval, as the SDK's poller has; the deadline is what bounds the wait
    return seen


def test_create_get_remove_watcher(envd: Envd, sandbox: StandInSandbox) -> None:
    folder = sandbox.host(f"{HOME}/polled")
    folder.mkdir()
    rpc = envd.rpc()
    watcher_id = rpc.create_watcher(
        pb.CreateWatcherRequest(path="polled", include_entry=True), headers=headers_for(sandbox)
    ).watcher_id
    assert watcher_id.startswith("w")
    (folder / "x").write_text("1")
    events = _poll_until(envd, sandbox, watcher_id, ("x", pb.EventType.WRITE))
    created = next(e for e in events if e.type == pb.EventType.CREATE)
    assert created.entry is not None and created.entry.path == f"{HOME}/polled/x"
    rpc.remove_watcher(pb.RemoveWatcherRequest(watcher_id=watcher_id), headers=headers_for(sandbox))
    with pytest.raises(ConnectError) as caught:
        rpc.get_watcher_events(pb.GetWatcherEventsRequest(watcher_id=watcher_id), headers=headers_for(sandbox))
    assert caught.value.code == Code.NOT_FOUND


def test_the_watched_folder_removed_is_reported(envd: Envd, sandbox: StandInSandbox) -> None:
    for name in ("streamed", "polled"):
        (sandbox.host(f"{HOME}/{name}") / "a").mkdir(parents=True)
    stream = watch(envd, sandbox, "streamed", recursive=True)
    watcher_id = (
        envd.rpc()
        .create_watcher(pb.CreateWatcherRequest(path="polled", recursive=True), headers=headers_for(sandbox))
        .watcher_id
    )
    # The server holds nothing open on the folders it watches: the kernel reports their removal.
    shutil.rmtree(sandbox.host(f"{HOME}/streamed"))
    shutil.rmtree(sandbox.host(f"{HOME}/polled"))
    stream.until(lambda: (".", pb.EventType.REMOVE) in stream.events())
    assert stream.events() == [("a", pb.EventType.REMOVE), (".", pb.EventType.REMOVE)]
    events = _poll_until(envd, sandbox, watcher_id, (".", pb.EventType.REMOVE))
    assert [(e.name, e.type) for e in events] == [("a", pb.EventType.REMOVE), (".", pb.EventType.REMOVE)]


def test_a_watcher_of_another_sandbox_is_not_found(envd: Envd, sandbox: StandInSandbox) -> None:
    other = envd.sandboxes.create(sandbox.sandbox_id + "-other")
    rpc = envd.rpc()
    watcher_id = rpc.create_watcher(pb.CreateWatcherRequest(path="~"), headers=headers_for(sandbox)).watcher_id
    for call in (
        lambda: rpc.get_watcher_events(pb.GetWatcherEventsRequest(watcher_id=watcher_id), headers=headers_for(other)),
        lambda: rpc.remove_watcher(pb.RemoveWatcherRequest(watcher_id=watcher_id), headers=headers_for(other)),
    ):
        with pytest.raises(ConnectError) as caught:
            call()
        assert caught.value.code == Code.NOT_FOUND and watcher_id in caught.value.message
    # Still the owner's.
    rpc.get_watcher_events(pb.GetWatcherEventsRequest(watcher_id=watcher_id), headers=headers_for(sandbox))
    rpc.remove_watcher(pb.RemoveWatcherRequest(watcher_id=watcher_id), headers=headers_for(sandbox))


def test_a_tree_too_big_to_watch_is_refused_and_frees_its_place(
    envd: Envd, sandbox: StandInSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    from e2b_local_api.runtime import watch as watch_module

    for name in ("a", "b", "c"):
        sandbox.host(f"{HOME}/big/{name}").mkdir(parents=True)
    monkeypatch.setattr(watch_module, "MAX_FOLDERS_PER_WATCH", 2)
    monkeypatch.setattr(service, "MAX_WATCHES_PER_SANDBOX", 1)
    rpc = envd.rpc()
    for _ in range(2):  # the refusal gives its place back: the second try is refused for the same reason
        with pytest.raises(ConnectError) as caught:
            rpc.create_watcher(pb.CreateWatcherRequest(path="big", recursive=True), headers=headers_for(sandbox))
        assert caught.value.code == Code.RESOURCE_EXHAUSTED and "smaller tree" in caught.value.message


def test_forget_sandbox_closes_its_watchers(tmp_path: Path) -> None:
    from connectrpc.request import Headers
    from e2b_local_api.dataplane.filesystem import filesystem_asgi_app

    from .conftest import Sandboxes

    sandboxes = Sandboxes(tmp_path)
    sandbox = sandboxes.create("forgotten")
    app = filesystem_asgi_app(sandboxes.lookup)

    class Ctx:
        request_headers = Headers(headers_for(sandbox))  # case-insensitive, as Connect hands them over

    async def run() -> None:
        created = await app.service.create_watcher(pb.CreateWatcherRequest(path="~"), Ctx())
        app.forget_sandbox("forgotten")
        with pytest.raises(ConnectError) as caught:
            await app.service.get_watcher_events(pb.GetWatcherEventsRequest(watcher_id=created.watcher_id), Ctx())
        assert caught.value.code == Code.NOT_FOUND

    asyncio.run(run())


def test_a_stream_whose_client_left_ends_quietly_however_connectrpc_says_it() -> None:
    # connectrpc turns the cancellation into ConnectError(canceled): uvicorn logged that as an app's failure
    # with its traceback, for every watch an SDK stopped.
    async def stream_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await receive()
        try:
            await asyncio.Event().wait()  # a watch with nothing to send
        except asyncio.CancelledError as cancelled:
            raise ConnectError(Code.CANCELED, "Request was cancelled") from cancelled

    async def run(leaves: bool) -> None:
        messages = [{"type": "http.request", "body": b"{}", "more_body": False}]
        client_left = asyncio.Event()

        async def receive() -> dict[str, Any]:
            if messages:
                return messages.pop(0)
            await client_left.wait()
            return {"type": "http.disconnect"}

        served = asyncio.ensure_future(
            service._ends_with_its_client(stream_app)({"type": "http", "path": "/x/WatchDir"}, receive, None)
        )
        await asyncio.sleep(0)
        if leaves:
            client_left.set()
            await asyncio.wait_for(served, DEADLINE)  # ended, nothing raised
        else:
            served.cancel()  # the server's own cancellation (its shutdown) is not swallowed
            with pytest.raises((asyncio.CancelledError, ConnectError)):
                await asyncio.wait_for(served, DEADLINE)

    asyncio.run(run(leaves=True))
    asyncio.run(run(leaves=False))
