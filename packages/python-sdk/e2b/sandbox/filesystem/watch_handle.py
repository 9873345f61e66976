"""What a directory watch reports: one `FilesystemEvent` per change, decoded from envd's."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from e2b.sandbox.filesystem.filesystem import EntryInfo, entry_info

__all__ = ["FilesystemEvent", "FilesystemEventType"]


class FilesystemEventType(Enum):
    """What happened to an entry."""

    CHMOD = "chmod"
    """Its permissions or other attributes changed."""
    CREATE = "create"
    """It was created."""
    REMOVE = "remove"
    """It was removed."""
    RENAME = "rename"
    """It was renamed or moved away."""
    WRITE = "write"
    """Its content was written."""


# envd's EventType numbers (filesystem.proto).
_EVENT_TYPES = {
    1: FilesystemEventType.CREATE,
    2: FilesystemEventType.WRITE,
    3: FilesystemEventType.REMOVE,
    4: FilesystemEventType.RENAME,
    5: FilesystemEventType.CHMOD,
}


@dataclass
class FilesystemEvent:
    """One change under a watched folder."""

    name: str
    """The entry's path relative to the watched folder."""
    type: FilesystemEventType
    """What happened."""
    entry: EntryInfo | None = None
    """The entry after the change, with `include_entry=True` (envd 0.6.3+)."""


def filesystem_event(event: Any) -> FilesystemEvent | None:
    """A generated `FilesystemEvent` as the SDK's; None for a kind this SDK does not know."""
    kind = _EVENT_TYPES.get(int(event.type)) if isinstance(event.type, int) else None
    if kind is None:
        return None
    entry = getattr(event, "entry", None)
    return FilesystemEvent(name=event.name, type=kind, entry=entry_info(entry) if entry is not None else None)


def watch_event(response: Any) -> FilesystemEvent | None:
    """The change in one WatchDir response; None for its start and keep-alive events."""
    chosen = getattr(response, "event", None)
    if chosen is None or getattr(chosen, "field", None) != "filesystem":
        return None
    return filesystem_event(chosen.value)
