"""The team's sandboxes and snapshots, a page per call, from the lists the API pages through.

What both flavours decide alike (the query, the cursor) is in `e2b._sandbox_logic.PageCursor`; here is the call.
"""

from __future__ import annotations

from typing import Unpack

from e2b import _sandbox_logic as logic
from e2b._config import ApiParams
from e2b._http import async_call as _call
from e2b._results import SandboxInfo, SnapshotInfo
from e2b.api import operations as ops

__all__ = ["AsyncSandboxPaginator", "AsyncSnapshotPaginator"]


class AsyncSandboxPaginator(logic.PageCursor):
    """The team's sandboxes, one page per `next_items()` call (newest first unless `order="asc"`).

    Check `has_next` before each call; `next_token` is the cursor the API
    returned in its `X-Next-Token` header (None on the last page).
    """

    async def next_items(self, **opts: Unpack[ApiParams]) -> list[SandboxInfo]:
        """The next page of sandboxes; `opts` override the listing's connection settings for this call.

        Raises:
            SandboxException: there is no next page (`has_next` is False).
        """
        config, params = self.request(opts)
        async with _call(config, logic.expected("listSandboxes")) as client:
            response = await ops.list_sandboxes.asyncio_detailed(client=client, **params)
        self.advance(response.headers)
        return [logic.sandbox_info(item) for item in logic.wire_list(response.parsed)]


class AsyncSnapshotPaginator(logic.PageCursor):
    """The team's snapshots, one page per `next_items()` call; check `has_next` first."""

    async def next_items(self, **opts: Unpack[ApiParams]) -> list[SnapshotInfo]:
        """The next page of snapshots; `opts` override the listing's connection settings for this call."""
        config, params = self.request(opts)
        async with _call(config, logic.expected("listSnapshots")) as client:
            response = await ops.list_snapshots.asyncio_detailed(client=client, **params)
        self.advance(response.headers)
        return [logic.snapshot_info(item) for item in logic.wire_list(response.parsed)]
