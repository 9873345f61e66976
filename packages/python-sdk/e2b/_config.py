"""Connection settings: what every SDK call accepts as `**opts`, and their defaults."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypedDict, cast
from urllib.parse import urlsplit

from e2b import _headers
from e2b._exceptions import InvalidArgumentException

if TYPE_CHECKING:  # httpx costs most of an import of e2b; the SDK loads it on first use
    import httpx
    from typing_extensions import Unpack

__all__ = ["ApiParams", "ConnectionConfig"]

DEFAULT_DOMAIN = "e2b.app"
DEFAULT_REQUEST_TIMEOUT = 30.0
# The longest request_timeout: a year. More is a wait no clock below can take (pyqwest's
# durations, a lock's timeout); 0 is the way to ask for no limit.
MAX_REQUEST_TIMEOUT = 365 * 24 * 3600.0
# What `Sandbox.create()` (and `e2b sandbox create`) starts when not told otherwise.
DEFAULT_TEMPLATE = "base"
DEFAULT_SANDBOX_TIMEOUT = 300
DEBUG_API_URL = "http://localhost:3000"


class ApiParams(TypedDict, total=False):
    """Connection settings every `Sandbox`/`AsyncSandbox` method accepts as keywords; None means the default."""

    api_key: str | None
    """Your team's API key; defaults to `E2B_API_KEY`.

    Surrounding whitespace (the line break of a key read from a file) is dropped, and a key with
    any other character a header cannot carry raises `InvalidArgumentException`.
    """
    domain: str | None
    """The E2B domain; defaults to `E2B_DOMAIN`, then `e2b.app`."""
    api_url: str | None
    """The API's URL; defaults to `E2B_API_URL`, then `https://api.{domain}` (`http://localhost:3000` in debug mode)."""
    request_timeout: float | None
    """Seconds for one call, the SDK's retries included; defaults to 30, 0 means no limit.

    The wait for the answer may use all of it: a healthy pause of a large sandbox takes tens of seconds.
    """
    debug: bool | None
    """Debug mode, as in e2b 2.x; defaults to `E2B_DEBUG` ("true").

    The API URL then defaults to `http://localhost:3000`, and `create`, `connect`, `kill` and
    `get_metrics` answer without a request (a sandbox id `debug_sandbox_id`). To try the SDK
    against the local API server, set `api_url` instead.
    """
    headers: Mapping[str, str] | None
    """Extra headers sent with every request.

    A value with a line break or a non-ASCII character raises `InvalidArgumentException`.
    """
    retries: int | None
    """How many times a busy answer (429, 502, 503, 504) is retried; default 3, 0 turns retries off."""
    transport: httpx.BaseTransport | httpx.AsyncBaseTransport | None
    """The httpx transport requests go through (for tests and proxies).

    The SDK wraps it in its retrying transport, unless it already is one
    (`e2b.default_transport(...)`), and never closes it.
    """
    logger: logging.Logger | None
    """A `logging.Logger` that each request and answer is logged on (INFO)."""


SETTINGS = frozenset(ApiParams.__annotations__)


def check_settings(opts: Mapping[str, Any]) -> None:
    """A keyword that is neither a parameter of the call nor a setting is a mistake: say so, never drop it."""
    unknown = sorted(set(opts) - SETTINGS)
    if unknown:
        names = ", ".join(map(repr, unknown))
        raise TypeError(
            f"unexpected keyword argument(s) {names}: not a parameter of this call nor a connection setting "
            f"({', '.join(sorted(SETTINGS))})"
        )


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes")


def _checked_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidArgumentException(
            f"api_url must be an http:// or https:// URL with a host (got {url!r}): "
            "check api_url, E2B_API_URL and E2B_DOMAIN"
        )
    return url


class ConnectionConfig:
    """Resolved connection settings: explicit options first, then the environment."""

    # The resolved values of `ApiParams`, declared here for their docstrings.
    debug: bool
    """Debug mode (`ApiParams.debug`)."""
    api_key: str | None
    """The API key, surrounding whitespace dropped; None when neither the option nor `E2B_API_KEY` gives one."""
    domain: str
    """The E2B domain."""
    api_url: str
    """The API's URL, checked to be an http:// or https:// URL."""
    request_timeout: float | None
    """Seconds for one call, retries included; None means no limit."""
    headers: dict[str, str]
    """Extra headers sent with every request."""
    retries: int | None
    """How many times a busy answer is retried; None means the default (3)."""
    transport: httpx.BaseTransport | httpx.AsyncBaseTransport | None
    """The httpx transport given, or None for the SDK's own."""
    logger: logging.Logger | None
    """The logger requests and answers are logged on, if any."""

    def __init__(self, **opts: Unpack[ApiParams]) -> None:
        check_settings(opts)
        debug = opts.get("debug")
        self.debug: bool = _env_flag("E2B_DEBUG") if debug is None else debug
        given = opts.get("api_key")
        self.api_key: str | None = (
            _headers.api_key(given, "api_key")
            if given
            else _headers.api_key(os.environ.get("E2B_API_KEY"), "E2B_API_KEY")
        )
        self.domain: str = opts.get("domain") or os.environ.get("E2B_DOMAIN") or DEFAULT_DOMAIN
        self.api_url: str = _checked_url(
            opts.get("api_url") or os.environ.get("E2B_API_URL") or self._derived_api_url()
        )
        self.request_timeout: float | None = self._timeout(opts.get("request_timeout"))
        self.headers: dict[str, str] = _headers.headers(opts.get("headers") or {})
        retries = opts.get("retries")
        if retries is not None and (isinstance(retries, bool) or not isinstance(retries, int) or retries < 0):
            raise InvalidArgumentException(f"retries must be an integer >= 0 (got {retries!r})")
        self.retries: int | None = retries
        self.transport = opts.get("transport")
        self.logger: logging.Logger | None = opts.get("logger")

    def _derived_api_url(self) -> str:
        return DEBUG_API_URL if self.debug else f"https://api.{self.domain}"

    @staticmethod
    def _timeout(value: float | None) -> float | None:
        # 0 is the E2B convention for "no limit"; httpx spells that None.
        if value is None:
            return DEFAULT_REQUEST_TIMEOUT
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not 0 <= value <= MAX_REQUEST_TIMEOUT  # NaN fails it too
        ):
            raise InvalidArgumentException(
                f"request_timeout must be a number of seconds from 0 (no limit) to {MAX_REQUEST_TIMEOUT:.0f} (a year) "
                f"(got {value!r})"
            )
        return value or None

    def merged(self, **opts: Unpack[ApiParams]) -> ConnectionConfig:
        """These settings with `opts` on top: an instance call may override one."""
        check_settings(opts)
        explicit = {k: v for k, v in opts.items() if v is not None}
        return ConnectionConfig(**cast(ApiParams, {**self.as_params(), **explicit}))

    def as_params(self) -> ApiParams:
        """These settings as keywords for a call (`**config.as_params()`); no limit is 0."""
        return ApiParams(
            api_key=self.api_key,
            domain=self.domain,
            api_url=self.api_url,
            request_timeout=self.request_timeout or 0,
            debug=self.debug,
            headers=self.headers,
            retries=self.retries,
            transport=self.transport,
            logger=self.logger,
        )

    def __repr__(self) -> str:
        """The API URL and debug mode; the key stays out of reprs and logs."""
        return f"ConnectionConfig(api_url={self.api_url!r}, debug={self.debug!r})"
