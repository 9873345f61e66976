"""Description and summary texts: what a spec says about data without them, and how many of them changed.

Texts are documentation: a reworded one is a patch, counted and not listed (docs/maintainers/bump.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["TEXT_KEYS", "count_text_changes", "single_spaced", "without_schemes", "without_text"]

TEXT_KEYS = frozenset({"description", "summary"})


def without_text(node: object) -> object:
    """`node` without its description and summary texts, for comparing what a schema says about data."""
    if isinstance(node, Mapping):
        return {k: without_text(v) for k, v in node.items() if k not in TEXT_KEYS and k != "example"}
    if isinstance(node, list):
        return [without_text(v) for v in node]
    return node


def single_spaced(text: object) -> str:
    # YAML folding and re-wrapping change whitespace, not meaning.
    return " ".join(str(text).split()) if text is not None else ""


def _by_identity(items: Iterable[object]) -> dict[object, object]:
    # Match list entries by identity, not position, so that reordering
    # parameters or tags does not look like rewording them.
    keyed: dict[object, object] = {}
    for index, item in enumerate(items):
        node = item if isinstance(item, Mapping) else {}
        if isinstance(node.get("name"), str):
            keyed[(node.get("in"), node["name"])] = item
        elif isinstance(node.get("$ref"), str):
            keyed[node["$ref"]] = item
        else:
            keyed[index] = item
    return keyed


def without_schemes(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    """`doc` without its security schemes, whose texts `compare.py`'s `scheme_texts` weighs by credential."""
    components = doc.get("components")
    if not isinstance(components, Mapping):
        return doc
    if "securitySchemes" not in components:
        return doc
    return {**doc, "components": {k: v for k, v in components.items() if k != "securitySchemes"}}


def count_text_changes(old: object, new: object) -> int:
    """Count description/summary texts that differ where both sides have the node."""
    if isinstance(old, list) and isinstance(new, list):
        old_keyed, new_keyed = _by_identity(old), _by_identity(new)
        return sum(count_text_changes(old_keyed[k], new_keyed[k]) for k in old_keyed.keys() & new_keyed.keys())
    if not (isinstance(old, Mapping) and isinstance(new, Mapping)):
        return 0
    count = 0
    for key in old.keys() | new.keys():
        a, b = old.get(key), new.get(key)
        # `properties: {description: {...}}` is a schema named "description".
        if key in TEXT_KEYS and isinstance(a, str | None) and isinstance(b, str | None):
            count += single_spaced(a) != single_spaced(b)
        elif key in old and key in new:
            count += count_text_changes(a, b)
    return count
