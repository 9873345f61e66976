"""The data plane's checks on a caller's values, before any request: `InvalidArgumentException` naming the field.

Each check returns the value as it goes on the wire, so that a call site reads
`path = arguments.path("path", path)`; the rules are the control plane's
(`e2b._options`): bools are not numbers, None means "the default".
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from e2b import _options as options
from e2b._exceptions import InvalidArgumentException, brief

__all__ = [
    "MAX_PTY_SIZE",
    "command",
    "depth",
    "envs",
    "expiration",
    "optional_text",
    "path",
    "pid",
    "port",
    "pty_size",
    "stream_timeout",
    "text_or_bytes",
    "timeout_ms",
]

# The largest terminal side the SDK sends: the kernel's winsize holds 16-bit counts.
MAX_PTY_SIZE = 65535
# A command's or watch's `timeout`: up to a year, as `request_timeout` (e2b._config.MAX_REQUEST_TIMEOUT).
MAX_TIMEOUT = 365 * 24 * 3600.0


def path(field: str, value: object) -> str:
    """A path in the sandbox: a non-empty str without NUL (no filesystem call can take one)."""
    if not isinstance(value, str) or not value:
        raise InvalidArgumentException(f"{field} must be a non-empty str (got {brief(value)})")
    if "\x00" in value:
        raise InvalidArgumentException(f"{field} holds a NUL character, which no path in the sandbox can hold")
    return options.text(field, value)


def optional_text(field: str, value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, str) and "\x00" in value:
        raise InvalidArgumentException(f"{field} holds a NUL character, which envd cannot pass to a process")
    return options.text(field, value)


def command(value: object) -> str:
    """The shell command line: any str bash accepts, but not empty and without NUL."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidArgumentException(f"cmd must be a non-empty str (got {brief(value)})")
    return optional_text("cmd", value) or value


def envs(value: object) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidArgumentException(f"envs must be a dict of str to str (got {brief(value)})")
    checked = options.string_map("envs", value)
    for key, item in checked.items():
        if not key or "=" in key or "\x00" in key or "\x00" in item:
            raise InvalidArgumentException(
                f"envs[{key!r}]: a variable's name must be non-empty without '=' or NUL, its value without NUL"
            )
    return checked


def pid(value: object) -> int:
    return options.integer("pid", value, low=1, high=2**32 - 1)


def stream_timeout(field: str, value: object) -> float | None:
    """Seconds a stream may stay open; 0 or None: no limit. A negative or non-finite value is refused."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= MAX_TIMEOUT:
        raise InvalidArgumentException(
            f"{field} must be a number of seconds from 0 (no limit) to {MAX_TIMEOUT:.0f} (got {value!r})"
        )
    return float(value) or None


def timeout_ms(seconds: float | None) -> int | None:
    """A timeout for connectrpc: whole milliseconds, at least 1; None for no limit."""
    if not seconds or not math.isfinite(seconds):
        return None
    return max(1, round(seconds * 1000))


def pty_size(value: object) -> tuple[int, int]:
    rows, cols = getattr(value, "rows", None), getattr(value, "cols", None)
    if rows is None or cols is None:
        raise InvalidArgumentException(f"size must be a PtySize(rows=..., cols=...) (got {brief(value)})")
    return (
        options.integer("size.rows", rows, low=1, high=MAX_PTY_SIZE),
        options.integer("size.cols", cols, low=1, high=MAX_PTY_SIZE),
    )


def text_or_bytes(field: str, value: object) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape")
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    raise InvalidArgumentException(f"{field} must be str or bytes (got a {type(value).__name__})")


def depth(value: object) -> int:
    if value is None:
        return 0
    return options.integer("depth", value, low=1, high=2**31 - 1)


def port(value: object) -> int:
    return options.integer("port", value, low=1, high=65535)


def expiration(value: object) -> int | None:
    if value is None:
        return None
    return options.integer("use_signature_expiration", value, low=1)
