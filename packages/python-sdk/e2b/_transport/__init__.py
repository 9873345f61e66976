"""Retrying httpx transports for the SDK's API clients.

Busy responses (429, 502, 503, 504) are retried with capped, jittered
exponential backoff inside the request's deadline. A 503 that refuses a
sandbox pause is returned after one request: its small JSON body is peeked
(at most ``RetryPolicy.peek_cap`` bytes, within a time budget) and always
handed back to the caller intact.

The pyqwest-backed defaults are imported on first use: pyqwest is only
needed once a client is built.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from e2b._transport._async import AsyncRetryableTransport
from e2b._transport._retry_rules import RetryPolicy
from e2b._transport._sync import RetryableTransport

if TYPE_CHECKING:
    from e2b._transport._factory import default_async_transport, default_transport

__all__ = [
    "AsyncRetryableTransport",
    "RetryPolicy",
    "RetryableTransport",
    "default_async_transport",
    "default_transport",
]


def __getattr__(name: str) -> Any:
    if name in ("default_transport", "default_async_transport"):
        return getattr(importlib.import_module("e2b._transport._factory"), name)
    raise AttributeError(f"module 'e2b._transport' has no attribute {name!r}")
