"""The sandbox a data-plane request is about, set by the router for the services it calls."""

from __future__ import annotations

from contextvars import ContextVar

from e2b_local_api.runtime.sandbox import SandboxRuntime

current_sandbox: ContextVar[SandboxRuntime] = ContextVar("current_sandbox")
