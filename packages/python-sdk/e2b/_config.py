"""Connection settings: what every SDK call accepts as `**opts`, and their defaults."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, TypedDict, cast

if TYPE_CHECKING:  # httpx costs most of an import of e2b; the SDK loads it on first use
    import httpx
    from typing_extensions import Unpack

__all__ = ["ApiParams", "ConnectionConfig"]

DEFAULT_DOMAIN = "e2b.app"
DEFAULT_REQUEST_TIMEOUT = 30.0
# What `Sandbox.create()` (and `e2b sandbox create`) starts when not told otherwise.
DEFAULT_TEMPLATE = "base"
DEFAULT_SANDBOX_TIMEOUT = 300
DEBUG_API_URL = "http://localhost:3000"


class ApiParams(TypedDict, total=False):
    """Connection settings every `Sandbox`/`AsyncSandbox` method accepts as keywords.

    - `api_key`: defaults to `E2B_API_KEY`.
    - `domain`: defaults to `E2B_DOMAIN`, then `e2b.app`.
    - `api_url`: defaults to `E2B_API_URL`, then `https://api.{domain}`
      (`http://localhost:3000` in debug mode).
    - `request_timeout`: seconds for one call including the SDK's retries;
      defaults to 30, 0 means no limit. The wait for the answer may use all
      of it: a healthy pause of a large sandbox takes tens of seconds.
    - `debug`: defaults to `E2B_DEBUG`; talks to a local API.
    - `headers`: extra headers sent with every request.
    - `transport`: the httpx transport requests go through (for tests and
      proxies); the SDK wraps it in its retrying transport and never closes it.
    """

    api_key: str | None
    domain: str | None
    api_url: str | None
    request_timeout: float | None
    debug: bool | None
    headers: Mapping[str, str] | None
    transport: httpx.BaseTransport | httpx.AsyncBaseTransport | None


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes")


class ConnectionConfig:
    """Resolved connection settings: explicit options first, then the environment."""

    def __init__(self, **opts: Unpack[ApiParams]) -> None:
        debug = opts.get("debug")
        self.debug: bool = _env_flag("E2B_DEBUG") if debug is None else debug
        self.api_key: str | None = opts.get("api_key") or os.environ.get("E2B_API_KEY")
        self.domain: str = opts.get("domain") or os.environ.get("E2B_DOMAIN") or DEFAULT_DOMAIN
        self.api_url: str = opts.get("api_url") or os.environ.get("E2B_API_URL") or self._derived_api_url()
        timeout = opts.get("request_timeout")
        self.request_timeout: float | None = self._timeout(timeout)
        self.headers: dict[str, str] = dict(opts.get("headers") or {})
        self.transport = opts.get("transport")

    def _derived_api_url(self) -> str:
        return DEBUG_API_URL if self.debug else f"https://api.{self.domain}"

    @staticmethod
    def _timeout(value: float | None) -> float | None:
        # 0 is the E2B convention for "no limit"; httpx spells that None.
        if value is None:
            return DEFAULT_REQUEST_TIMEOUT
        return value or None

    def merged(self, **opts: Unpack[ApiParams]) -> ConnectionConfig:
        """These settings with `opts` on top: an instance call may override one."""
        explicit = {k: v for k, v in opts.items() if v is not None}
        return ConnectionConfig(**cast(ApiParams, {**self.as_params(), **explicit}))

    def as_params(self) -> ApiParams:
        return ApiParams(
            api_key=self.api_key,
            domain=self.domain,
            api_url=self.api_url,
            request_timeout=self.request_timeout or 0,
            debug=self.debug,
            headers=self.headers,
            transport=self.transport,
        )

    def __repr__(self) -> str:
        # The key stays out of reprs and logs.
        return f"ConnectionConfig(api_url={self.api_url!r}, debug={self.debug!r})"
