"""What the SDK checks in a header before a request carries it: the API key, `headers=`, the idempotency key.

A value with a line break, another control character or a non-ASCII one
cannot be sent: httpx refuses it deep in the call, with the value in its
message. The SDK refuses it first, with `InvalidArgumentException` naming the
setting and never the value, since a header value is often a secret.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from e2b._exceptions import InvalidArgumentException

__all__ = ["api_key", "header_value", "headers"]

# RFC 9110's token: what a header name may hold.
_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
# Visible ASCII, space and tab: what httpx sends (it encodes header values as ASCII).
_VALUE = re.compile(r"[\t\x20-\x7e]*")


def header_value(field: str, value: object) -> str:
    """`value` if a header can carry it; the message names `field`, never the value."""
    if not isinstance(value, str):
        raise InvalidArgumentException(f"{field} must be a str (got a {type(value).__name__})")
    if not _VALUE.fullmatch(value):
        raise InvalidArgumentException(
            f"{field} holds a line break, a control character or a non-ASCII character, which no header "
            "can carry (the value is not shown here): check where it was read from"
        )
    return value


def headers(value: Mapping[Any, object]) -> dict[str, str]:
    """The `headers` setting, each name a token and each value sendable."""
    checked: dict[str, str] = {}
    for name, item in value.items():
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise InvalidArgumentException(f"headers: {name!r} is not a header name (letters, digits, -, _ and .)")
        checked[name] = header_value(f"headers[{name!r}]", item)
    return checked


def api_key(value: str | None, source: str) -> str | None:
    """The API key from `source` (`api_key` or `E2B_API_KEY`), without surrounding whitespace.

    A key read from a file (`open("key").read()`) or a CRLF `.env` ends with a
    line break that is never part of a key, so it is dropped, as e.g. `gh` and
    `docker login --password-stdin` drop it; anything else a header cannot
    carry is refused. An empty result is no key.
    """
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidArgumentException(f"{source} must be a str (got a {type(value).__name__})")
    return header_value(source, value.strip()) or None
