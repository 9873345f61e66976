"""JSON pointers (RFC 6901): the one way every stage names a place in the spec.

Pointers are kept as strings at the edges (contract file, messages) and as
tuples of unescaped segments inside, so that "~1" and "/" never get confused.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

Segments = tuple[str, ...]

# RFC 6901: "~" is only valid as "~0" or "~1".
_BAD_TILDE = re.compile(r"~(?![01])")
# Array indices are plain decimals without leading zeros; "01" is a key, not 1.
_INDEX = re.compile(r"0|[1-9][0-9]*")


class PointerSyntaxError(ValueError):
    """The text is not a JSON pointer."""


def parse_pointer(pointer: str) -> Segments:
    """Split a pointer into unescaped segments; "" is the whole document."""
    if pointer == "":
        return ()
    if not pointer.startswith("/"):
        raise PointerSyntaxError(f"JSON pointer {pointer!r} must be empty or start with '/'")
    if _BAD_TILDE.search(pointer):
        raise PointerSyntaxError(f"JSON pointer {pointer!r} has a '~' not followed by 0 or 1")
    # Unescape "~1" before "~0", or "~01" would wrongly become "/".
    return tuple(part.replace("~1", "/").replace("~0", "~") for part in pointer[1:].split("/"))


def format_pointer(segments: Iterable[str | int]) -> str:
    """Join segments into a pointer, escaping "~" and "/"."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in segments)


def resolve_pointer(data: Any, pointer: str | Segments) -> tuple[bool, Any]:
    """Return (True, value) at the pointer, or (False, None) when nothing is there."""
    segments = parse_pointer(pointer) if isinstance(pointer, str) else pointer
    node = data
    for segment in segments:
        found, node = _step(node, segment)
        if not found:
            return False, None
    return True, node


def _step(node: Any, segment: str) -> tuple[bool, Any]:
    if isinstance(node, dict):
        return (True, node[segment]) if segment in node else (False, None)
    if isinstance(node, list) and _INDEX.fullmatch(segment):
        index = int(segment)
        return (True, node[index]) if index < len(node) else (False, None)
    return False, None
