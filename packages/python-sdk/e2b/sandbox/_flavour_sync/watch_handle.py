"""`files.watch_dir` and its `WatchHandle`, sync: the hand-written twin of `e2b.sandbox._flavour_async.watch_handle`.

A sync caller has no loop to run callbacks in, so, as e2b 2.x's `Sandbox`,
`watch_dir` creates a watcher in envd (CreateWatcher) and the handle polls
it: `get_new_events()` returns what happened since the last call, `stop()`
removes the watcher. Users import the handle from
`e2b.sandbox_sync.filesystem.watch_handle`, as in 2.x.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from e2b._exceptions import FileNotFoundException, SandboxException, TemplateException
from e2b.envd.filesystem import filesystem_pb
from e2b.sandbox import arguments, versions
from e2b.sandbox.filesystem.watch_handle import FilesystemEvent, filesystem_event

if TYPE_CHECKING:
    from e2b.sandbox_sync.envd_client import EnvdClient

__all__ = ["WatchHandle", "Watching"]


class WatchHandle:
    """A watcher in envd: poll it with `get_new_events()`, end it with `stop()`."""

    def __init__(self, envd: EnvdClient, watcher_id: str, user: str | None) -> None:
        self._envd = envd
        self._watcher_id = watcher_id
        self._user = user
        self._closed = False

    def get_new_events(self, request_timeout: float | None = None) -> list[FilesystemEvent]:
        """The changes since the last call (or since `watch_dir`)."""
        if self._closed:
            raise SandboxException("the watcher is stopped: start another with watch_dir()")
        response = self._envd.unary(
            self._envd.filesystem.get_watcher_events,
            filesystem_pb.GetWatcherEventsRequest(watcher_id=self._watcher_id),
            headers=self._envd.headers(self._user, user_given=True),
            request_timeout=request_timeout,
            idempotent=False,  # a poll drains what it answers: sent twice, events would be lost
        )
        return [event for event in map(filesystem_event, response.events) if event is not None]

    def stop(self, request_timeout: float | None = None) -> None:
        """Remove the watcher."""
        self._envd.unary(
            self._envd.filesystem.remove_watcher,
            filesystem_pb.RemoveWatcherRequest(watcher_id=self._watcher_id),
            headers=self._envd.headers(self._user, user_given=True),
            request_timeout=request_timeout,
            idempotent=False,
        )
        self._closed = True


def _gate(flag: bool, needed: versions.EnvdVersion, have: versions.EnvdVersion, what: str) -> None:
    if flag and have < needed:
        raise TemplateException(f"{what} needs envd {versions.shown(needed)} or later: rebuild the sandbox's template")


class Watching:
    """What `Filesystem` inherits to watch folders: a watcher to poll."""

    _envd: EnvdClient

    def watch_dir(
        self,
        path: str,
        user: str | None = None,
        request_timeout: float | None = None,
        recursive: bool = False,
        include_entry: bool = False,
        allow_network_mounts: bool = False,
    ) -> WatchHandle:
        """Watch the folder `path`; poll the handle for changes. `FileNotFoundException` when there is none."""
        request = filesystem_pb.CreateWatcherRequest(
            path=arguments.path("path", path),
            recursive=bool(recursive),
            include_entry=bool(include_entry),
            allow_network_mounts=bool(allow_network_mounts),
        )
        user = arguments.optional_text("user", user)
        version = self._envd.endpoint.version
        _gate(recursive, versions.ENVD_VERSION_RECURSIVE_WATCH, version, "recursive=True")
        _gate(include_entry, versions.ENVD_VERSION_FS_EVENT_ENTRY_INFO, version, "include_entry=True")
        _gate(allow_network_mounts, versions.ENVD_VERSION_WATCH_NETWORK_MOUNTS, version, "allow_network_mounts=True")
        response = self._envd.unary(
            self._envd.filesystem.create_watcher,
            request,
            headers=self._envd.headers(user, user_given=True),
            request_timeout=request_timeout,
            idempotent=False,
            not_found=FileNotFoundException,
        )
        return WatchHandle(self._envd, response.watcher_id, user)
