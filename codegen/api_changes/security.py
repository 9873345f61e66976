"""Security alternatives and schemes as a caller meets them: what each operation accepts, what each scheme asks.

`compare.py` judges the changes by the SDK's credential (spec/contract.yml); here, only what the spec says.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["alternatives_text", "now_text", "scheme_identity", "scheme_key", "security_alternatives"]


def _as_mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def security_alternatives(doc: Mapping[str, Any], op: Mapping[str, Any]) -> frozenset[frozenset[str]]:
    """The operation's security alternatives (its own, else the document's); no requirement is one empty set."""
    raw = op["security"] if "security" in op else doc.get("security")
    alternatives = frozenset(
        frozenset(str(name) for name in _as_mapping(item)) for item in raw or [] if isinstance(item, Mapping)
    )
    return alternatives or frozenset({frozenset()})


def now_text(new: frozenset[frozenset[str]], refused: bool) -> str:
    """What an operation that refuses the SDK accepts instead."""
    if not refused:
        return ""
    return "now one of: " + ", ".join(" + ".join(sorted(way)) or "(none)" for way in sorted(new, key=sorted))


def alternatives_text(old: frozenset[str], new: frozenset[frozenset[str]]) -> str:
    shown = [" + ".join(sorted(alternative)) or "(none)" for alternative in sorted(new, key=sorted)]
    return f"{' + '.join(sorted(old)) or 'no credentials'} no longer suffices; now one of: {', '.join(shown)}"


_SCHEME_KEYS = ("type", "in", "name", "scheme")


def scheme_identity(scheme: object) -> str:
    """What a caller must send for a scheme: its type and where it goes (descriptions aside), as the spec writes it."""
    node = _as_mapping(scheme)
    return " ".join(f"{key}={node[key]}" for key in _SCHEME_KEYS if key in node) or "(undefined)"


def scheme_key(scheme: object) -> tuple[tuple[str, str], ...] | None:
    """A scheme's identity as HTTP compares it: a header's name and an auth scheme (`bearer`) in any case."""
    node = _as_mapping(scheme)
    if not node:
        return None
    key = []
    for name in _SCHEME_KEYS:
        if name in node:
            value = str(node[name])
            if name == "scheme" or (name == "name" and node.get("in") == "header"):
                value = value.lower()  # RFC 9110: field names (5.1) and authentication schemes (11.1)
            key.append((name, value))
    return tuple(key)
