"""Cursor pagination: one page of an ordered list, and the `X-Next-Token` for the rest.

A token is opaque to clients. Inside it is the sort key of the page's last
item and the direction it was issued for, so the next page starts right
after that item even if items were added or removed in between, and a token
is refused (400) by a request for the other direction instead of silently
skipping or repeating items.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from e2b_local_api.http.errors import bad_request

T = TypeVar("T")
Key = tuple[int, ...]

_DIRECTIONS = {"d": True, "a": False}  # token prefix -> descending


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    next_token: str | None


def encode(key: Key, *, descending: bool) -> str:
    return ("d" if descending else "a") + ".".join(map(str, key))


def decode(token: str, *, descending: bool, width: int) -> Key:
    """The key a token carries; 400 naming `nextToken` for anything this server did not issue."""
    direction, parts = token[:1], token[1:].split(".")
    if direction not in _DIRECTIONS or len(parts) != width or not all(p.isascii() and p.isdigit() for p in parts):
        raise bad_request(f"nextToken: not a token from X-Next-Token: {token!r}")
    if _DIRECTIONS[direction] is not descending:
        raise bad_request("nextToken: issued for the other order; page with the order it was issued for")
    return tuple(int(p) for p in parts)


def cut(
    items: Sequence[T], key: Callable[[T], Key], token: str | None, limit: int, *, descending: bool, width: int
) -> Page[T]:
    """The page of `items` (already in order) after `token`, at most `limit` long."""
    if token is not None:
        after = decode(token, descending=descending, width=width)
        items = [i for i in items if (key(i) < after if descending else key(i) > after)]
    page = list(items[:limit])
    more = len(items) > limit
    return Page(page, encode(key(page[-1]), descending=descending) if more else None)
