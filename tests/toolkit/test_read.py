"""toolkit.read.holds_exactly: the staged files against what the tree's folders hold."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit.read import holds_exactly

STAGED = {"gen/a.py": b"a\n", "gen/sub/b.py": b"b\n", "other/c.py": b"not under the folders asked about\n"}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for rel in ("gen/a.py", "gen/sub/b.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(STAGED[rel])
    (tmp_path / "gen/sub/__pycache__").mkdir()
    (tmp_path / "gen/sub/__pycache__/b.cpython-311.pyc").write_bytes(b"bytecode")
    return tmp_path


def test_the_same_files_are_held_exactly(root: Path) -> None:
    assert holds_exactly(root, ["gen"], STAGED)


@pytest.mark.parametrize("change", ["edited", "extra", "missing", "symlink"])
def test_any_difference_is_not(root: Path, change: str) -> None:
    if change == "edited":
        (root / "gen/a.py").write_bytes(b"A\n")
    elif change == "extra":
        (root / "gen/sub/new.py").write_bytes(b"")
    elif change == "missing":
        (root / "gen/sub/b.py").unlink()
    else:
        (root / "outside.py").write_bytes(STAGED["gen/a.py"])  # the link's target holds the staged bytes
        (root / "gen/a.py").unlink()
        (root / "gen/a.py").symlink_to(root / "outside.py")
    assert not holds_exactly(root, ["gen"], STAGED)
