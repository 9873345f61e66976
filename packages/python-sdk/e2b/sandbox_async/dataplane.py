"""The data plane on `AsyncSandbox`: `commands`, `files`, `pty`, `is_running()`, and the URLs of `EnvdAccess`.

A mixin, so that the control plane's class gains it with one base class. The
envd client (protobuf, connectrpc) is imported at the first data-plane call,
not with the sandbox class: `from e2b import AsyncSandbox` stays as cheap as
the control plane. The objects are made on first use and made again when
`connect()` changed what they were made from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from e2b.sandbox.envd_access import EnvdAccess

if TYPE_CHECKING:
    from e2b.sandbox_async.commands.command import Commands
    from e2b.sandbox_async.commands.pty import Pty
    from e2b.sandbox_async.envd_client import EnvdClient
    from e2b.sandbox_async.filesystem.filesystem import Filesystem

__all__ = ["AsyncDataPlane"]


class AsyncDataPlane(EnvdAccess):
    """Running commands, terminals and files in the sandbox, through envd."""

    def _data_plane(self) -> dict[str, Any]:
        endpoint = self._envd_endpoint()
        planes: dict[str, Any] | None = self.__dict__.get("_data_plane_cache")
        if planes is None or planes["endpoint"] is not endpoint:
            # Here, not at the top: these bring in the envd client (protobuf, connectrpc).
            from e2b.sandbox_async import envd_client as client
            from e2b.sandbox_async.commands import command, pty
            from e2b.sandbox_async.filesystem import filesystem

            envd = client.EnvdClient(endpoint)
            planes = {
                "endpoint": endpoint,
                "envd": envd,
                "commands": command.Commands(envd),
                "files": filesystem.Filesystem(envd),
                "pty": pty.Pty(envd),
            }
            self.__dict__["_data_plane_cache"] = planes
        return planes

    @property
    def commands(self) -> Commands:
        """Run commands in the sandbox."""
        commands: Commands = self._data_plane()["commands"]
        return commands

    @property
    def files(self) -> Filesystem:
        """Read, write and watch the sandbox's files."""
        files: Filesystem = self._data_plane()["files"]
        return files

    @property
    def pty(self) -> Pty:
        """Interactive terminals in the sandbox."""
        pty: Pty = self._data_plane()["pty"]
        return pty

    async def is_running(self, request_timeout: float | None = None) -> bool:
        """Whether the sandbox runs: False when the proxy in front of it answers 502 (no such sandbox)."""
        envd: EnvdClient = self._data_plane()["envd"]
        return await envd.is_running(request_timeout)
