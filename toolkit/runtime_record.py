"""The pin's record: bump's pending changelog fragments, each naming the pin it started at and the pin it set.

`+runtime-<start12>-<pin12>.<type>.md` (`+runtime-<pin12>.<type>.md` before they named their start): bump
replaces the one that ends at the current pin, and the release refuses any that do not chain to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from toolkit.paths import BUMP_FRAGMENT_NAME, CHANGELOG_DIR, RUNTIME_REF


@dataclass(frozen=True)
class PinRecord:
    """One bump fragment: the change from `start` (None in the older form, which did not name it) to `pin`."""

    path: str  # relative to the repository root
    start: str | None  # 12 hex digits
    pin: str


@dataclass(frozen=True)
class PinChain:
    """The records that lead to the current pin, oldest first, and those that do not (`stray`)."""

    chained: tuple[PinRecord, ...]
    stray: tuple[PinRecord, ...]

    @property
    def last(self) -> PinRecord | None:
        """The record that set the current pin: a bump from it replaces it (when it names its start)."""
        return self.chained[-1] if self.chained else None


def read_records(root: Path) -> list[PinRecord]:
    """Every bump fragment pending in the SDK's changelog folder, by name."""
    folder = root / CHANGELOG_DIR
    if not folder.is_dir():
        return []
    found = []
    for name in sorted(p.name for p in folder.iterdir()):
        match = BUMP_FRAGMENT_NAME.fullmatch(name)
        if match:
            found.append(PinRecord(f"{CHANGELOG_DIR}/{name}", match["start"], match["pin"]))
    return found


def chain_to(records: list[PinRecord], pin: str) -> PinChain:
    """Walk back from `pin` through the records: each one's start must be the pin of exactly one other.

    Two records that end at one pin leave the walk there (which one holds is not knowable): both are stray.
    """
    by_pin: dict[str, list[PinRecord]] = {}
    for record in records:
        by_pin.setdefault(record.pin, []).append(record)
    chained: list[PinRecord] = []
    at: str | None = pin[:12]
    while at is not None and len(by_pin.get(at, ())) == 1 and by_pin[at][0] not in chained:
        record = by_pin[at][0]
        chained.append(record)
        at = record.start
    chained.reverse()
    return PinChain(tuple(chained), tuple(r for r in records if r not in chained))


def stray_remedy(pin: str) -> str:
    return (
        f"these record a runtime change {RUNTIME_REF} ({pin[:12]}) no longer follows from (it was set by hand, or "
        "the fragment came from another branch): delete them, or set the pin back to the one they end at; "
        "then `nox -s bump -- <ref>` records the change from the current pin"
    )
