"""uvicorn's server, with its exit signal ending every sandbox first.

uvicorn's graceful shutdown waits for open requests, and a process stream stays
open for as long as its process runs: on SIGTERM or Ctrl-C the sandboxes are
killed at once, their streams end (`unavailable`), and the shutdown goes on.
"""

from __future__ import annotations

from types import FrameType

import uvicorn

from e2b_local_api.runtime.registry import Runtimes


class Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, runtimes: Runtimes) -> None:
        super().__init__(config)
        self.runtimes = runtimes

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.runtimes.close_soon()
        super().handle_exit(sig, frame)
