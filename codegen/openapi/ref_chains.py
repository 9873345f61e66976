"""Where a chain of `$ref`s to `$ref`s leads: followed once per reference, however many share it.

How it works, and why: docs/maintainers/design.md, "codegen/openapi/ref_chains.py".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from codegen.openapi.json_pointer import resolve_pointer

# Real specs chain one or two aliases (a response naming a shared one); 32 leaves ample room.
MAX_HOPS = 32
# A cycle or chain this long is shown by its ends.
_SHOWN = 6


@dataclass(frozen=True)
class Lead:
    """Where following a local `$ref` ends.

    `cycle` (a cycle's members, shared by all of them) with `start`, the
    position where this reference enters it; `broken` when a reference on the
    way names nothing (reported where that one is written); else `hops`
    references followed to reach a node that is not an alias, ending at `end`.
    """

    hops: int = 0
    end: str = ""
    cycle: tuple[str, ...] = ()
    start: int = 0
    broken: bool = False

    def cycle_text(self) -> str:
        """The cycle from where this reference enters it, back to that member: `A -> B -> A`."""
        members = self.cycle[self.start :] + self.cycle[: self.start]
        if len(members) < _SHOWN:
            return " -> ".join((*members, members[0]))
        return " -> ".join((*members[:3], "...", members[-1], members[0])) + f" ({len(members):,} references)"


class RefChains:
    """Each local `$ref` value's `Lead`, computed once per value and memoized."""

    def __init__(self, data: Any) -> None:
        self._data = data
        self._leads: dict[str, Lead] = {}

    def lead(self, ref: str) -> Lead:
        """Where the local reference `ref` (`#/...`) leads."""
        path: list[str] = []
        on_path: dict[str, int] = {}
        current: str | None = ref
        while current and current not in self._leads:
            if current in on_path:
                return self._close_cycle(path, on_path[current])
            on_path[current] = len(path)
            path.append(current)
            current = self._alias_target(current)
        if current is None:  # path[-1] names a node that is not an alias
            lead = Lead(hops=0, end=path[-1])
        elif current == "":  # path[-1] names nothing
            lead = Lead(broken=True)
        else:  # a reference followed before
            lead = self._leads[current]
        for step in reversed(path):
            lead = lead if lead.cycle or lead.broken else Lead(hops=lead.hops + 1, end=lead.end)
            self._leads[step] = lead
        return self._leads.get(ref, lead)

    def _close_cycle(self, path: list[str], first: int) -> Lead:
        members = tuple(path[first:])
        for position, member in enumerate(members):
            self._leads[member] = Lead(cycle=members, start=position)
        # The references that lead into it enter it where their chain meets it.
        entry = self._leads[members[0]]
        for step in path[:first]:
            self._leads[step] = entry
        return self._leads[path[0]]

    def _alias_target(self, ref: str) -> str | None:
        """The `$ref` of the node `ref` names, when that node is only an alias; "" when `ref` names nothing."""
        if not ref.startswith("#"):
            return ""
        try:
            # The fragment is a URI part, so "%25"-style escapes come off first.
            found, node = resolve_pointer(self._data, unquote(ref[1:]))
        except ValueError:
            return ""
        if not found:
            return ""
        target = node.get("$ref") if isinstance(node, dict) else None
        return target if isinstance(target, str) else None
