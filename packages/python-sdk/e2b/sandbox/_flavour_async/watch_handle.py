"""`files.watch_dir` and its handle, async: written by hand in both flavours, since their APIs differ.

The async flavour keeps a WatchDir stream open and calls `on_event` for each
change as it comes (a background task), as e2b 2.x's `AsyncSandbox` does;
the sync flavour (`e2b.sandbox._flavour_sync.watch_handle`) creates a
watcher and polls it with `get_new_events()`, as 2.x's `Sandbox` does.
`Filesystem` gets `watch_dir` from this module's `AsyncWatching`; users import the
handle from `e2b.sandbox_async.filesystem.watch_handle`, as in 2.x.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from e2b._exceptions import FileNotFoundException, TemplateException, UnexpectedResponseException
from e2b.envd.filesystem import filesystem_pb
from e2b.sandbox import arguments, versions
from e2b.sandbox._flavour_async.steps import call_handler, first_item
from e2b.sandbox.filesystem.watch_handle import FilesystemEvent, watch_event

if TYPE_CHECKING:
    from e2b.sandbox_async.envd_client import EnvdClient

__all__ = ["AsyncWatchHandle", "AsyncWatching"]


class AsyncWatchHandle:
    """A directory watch in progress; `stop()` ends it."""

    def __init__(
        self,
        events: AsyncIterator[Any],
        on_event: Callable[[FilesystemEvent], object],
        on_exit: Callable[[Exception | None], object] | None = None,
    ) -> None:
        self._events = events
        self._on_event = on_event
        self._on_exit = on_exit
        self._task = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        error: Exception | None = None
        try:
            async for response in self._events:
                event = watch_event(response)
                if event is not None:
                    await call_handler(self._on_event, event)
        except Exception as failure:
            error = failure
        finally:
            # on_exit is told how the watch ended, stopped (None) included; its own failure is its own.
            try:
                await call_handler(self._on_exit, error)
            except Exception:
                pass

    async def stop(self) -> None:
        """End the watch and close its stream."""
        if not self._task.done():
            self._task.cancel()
            await asyncio.wait([self._task])
        aclose = getattr(self._events, "aclose", None)
        if aclose is not None:
            try:
                await aclose()
            except Exception:
                pass


def _gate(flag: bool, needed: versions.EnvdVersion, have: versions.EnvdVersion, what: str) -> None:
    if flag and have < needed:
        raise TemplateException(f"{what} needs envd {versions.shown(needed)} or later: rebuild the sandbox's template")


class AsyncWatching:
    """What `Filesystem` inherits to watch folders: a stream of changes, to callbacks."""

    _envd: EnvdClient

    async def watch_dir(
        self,
        path: str,
        on_event: Callable[[FilesystemEvent], object],
        on_exit: Callable[[Exception | None], object] | None = None,
        user: str | None = None,
        request_timeout: float | None = None,
        timeout: float | None = 60,
        recursive: bool = False,
        include_entry: bool = False,
        allow_network_mounts: bool = False,
    ) -> AsyncWatchHandle:
        """Call `on_event` for every change under the folder `path` until `stop()` or `timeout` (0: none).

        `on_exit` is called once the watch ends, with the exception that ended it or None.
        `FileNotFoundException` when there is no such folder.
        """
        request = filesystem_pb.WatchDirRequest(
            path=arguments.path("path", path),
            recursive=bool(recursive),
            include_entry=bool(include_entry),
            allow_network_mounts=bool(allow_network_mounts),
        )
        if not callable(on_event):
            raise TypeError("on_event must be a callable taking a FilesystemEvent")
        stream_timeout = arguments.stream_timeout("timeout", timeout)
        version = self._envd.endpoint.version
        _gate(recursive, versions.ENVD_VERSION_RECURSIVE_WATCH, version, "recursive=True")
        _gate(include_entry, versions.ENVD_VERSION_FS_EVENT_ENTRY_INFO, version, "include_entry=True")
        _gate(allow_network_mounts, versions.ENVD_VERSION_WATCH_NETWORK_MOUNTS, version, "allow_network_mounts=True")
        events = self._envd.filesystem.watch_dir(
            request,
            headers=self._envd.stream_headers(
                arguments.optional_text("user", user), user_given=True, stream_timeout=stream_timeout
            ),
            **self._envd.stream_options(stream_timeout),
        )
        stream = self._envd.stream_items(events, not_found=FileNotFoundException, stream_timeout=stream_timeout)
        try:
            first = await first_item(stream, self._envd.request_timeout(request_timeout), "could not watch the folder")
            chosen = getattr(first, "event", None)
            if getattr(chosen, "field", None) != "start":
                raise UnexpectedResponseException("the answer is not envd's: a watch's first event is not its start")
        except BaseException:
            await stream.aclose()  # type: ignore[attr-defined]
            raise
        return AsyncWatchHandle(stream, on_event, on_exit)
