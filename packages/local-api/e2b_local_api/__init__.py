"""A local, in-memory E2B sandbox API for end-to-end tests and offline use.

Its names are imported on first use (PEP 562): `e2b_local_api.launcher`, the
console script, must run before fastapi, pydantic and uvicorn are imported,
and importing it imports this package first.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from e2b_local_api.app import create_app
    from e2b_local_api.control.auth import DEV_API_KEY, AuthConfig
    from e2b_local_api.state.store import SandboxStore

__all__ = ["DEV_API_KEY", "AuthConfig", "SandboxStore", "create_app"]

_LAZY = {
    "DEV_API_KEY": "e2b_local_api.control.auth",
    "AuthConfig": "e2b_local_api.control.auth",
    "SandboxStore": "e2b_local_api.state.store",
    "create_app": "e2b_local_api.app",
}


def __getattr__(name: str) -> object:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'e2b_local_api' has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
