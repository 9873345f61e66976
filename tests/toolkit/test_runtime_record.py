"""The pin's record (toolkit/runtime_record.py): bump's fragments, read from a real folder, chained to a pin."""

from __future__ import annotations

from pathlib import Path

from toolkit.paths import CHANGELOG_DIR, fragment_path, is_write_target
from toolkit.runtime_record import PinRecord, chain_to, read_records

A, B, C, D = ("a" * 40, "b" * 40, "c" * 40, "d" * 40)


def write(root: Path, *names: str) -> None:
    folder = root / CHANGELOG_DIR
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_text("The runtime API ...\n")


def names(records: tuple[PinRecord, ...]) -> list[str]:
    return [r.path.rsplit("/", 1)[1] for r in records]


def test_a_chain_is_walked_back_from_the_pin_and_the_rest_is_stray(tmp_path: Path) -> None:
    # The older form (no start) can only open a chain; another package's fragment is not a record.
    write(tmp_path, f"+runtime-{B[:12]}.misc.md", f"+runtime-{B[:12]}-{C[:12]}.feature.md", "12.fix.md")
    write(tmp_path, f"+runtime-{A[:12]}-{D[:12]}.breaking.md")
    chain = chain_to(read_records(tmp_path), C)
    assert names(chain.chained) == [f"+runtime-{B[:12]}.misc.md", f"+runtime-{B[:12]}-{C[:12]}.feature.md"]
    assert names(chain.stray) == [f"+runtime-{A[:12]}-{D[:12]}.breaking.md"]
    assert chain.last is not None and chain.last.start == B[:12]


def test_two_records_of_one_pin_are_both_stray(tmp_path: Path) -> None:
    write(tmp_path, f"+runtime-{A[:12]}-{C[:12]}.feature.md", f"+runtime-{B[:12]}-{C[:12]}.breaking.md")
    chain = chain_to(read_records(tmp_path), C)
    assert chain.chained == () and len(chain.stray) == 2


def test_the_written_name_is_a_record_and_a_write_target(tmp_path: Path) -> None:
    path = fragment_path(A, B, "major")
    assert path == f"{CHANGELOG_DIR}/+runtime-{A[:12]}-{B[:12]}.breaking.md"
    assert is_write_target(path) and is_write_target(f"{CHANGELOG_DIR}/+runtime-{B[:12]}.fix.md")
    assert not is_write_target(f"{CHANGELOG_DIR}/+runtime-{A[:12]}-{B[:12]}.bugfix.md")
    write(tmp_path, path.rsplit("/", 1)[1])
    (record,) = read_records(tmp_path)
    assert (record.start, record.pin) == (A[:12], B[:12])
