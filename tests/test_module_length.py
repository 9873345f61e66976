"""No hand-written module is over 700 lines: past that, a module holds more than one idea.

Read: every `.py` file under the tools (codegen/, toolkit/, release/, python_api/) and the packages
(packages/*), generated folders (toolkit/paths.py GENERATED_ROOTS) left out. A module that grows past
the limit is split by what its parts do.
"""

from __future__ import annotations

from pathlib import Path

from toolkit.paths import GENERATED_ROOTS

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("codegen", "toolkit", "release", "python_api", "packages")
MOST_LINES = 700


def hand_written_modules(root: Path) -> list[Path]:
    generated = tuple(root / folder for folder in GENERATED_ROOTS)
    return sorted(
        path
        for folder in FOLDERS
        for path in (root / folder).rglob("*.py")
        if not any(path.is_relative_to(g) for g in generated) and "node_modules" not in path.parts
    )


def too_long(paths: list[Path], root: Path) -> list[str]:
    lines = {path: len(path.read_text(encoding="utf-8").splitlines()) for path in paths}
    return [f"{path.relative_to(root).as_posix()}: {n} lines" for path, n in lines.items() if n > MOST_LINES]


def test_no_hand_written_module_is_over_the_limit() -> None:
    modules = hand_written_modules(ROOT)
    read = {path.relative_to(ROOT).as_posix() for path in modules}
    assert {"codegen/api_changes/compare.py", "packages/python-sdk/e2b/sandbox_async/main.py"} <= read
    assert not any(name.startswith(GENERATED_ROOTS) for name in read)
    assert too_long(modules, ROOT) == [], f"split it by what its parts do (at most {MOST_LINES} lines)"


def test_a_module_one_line_over_is_named(tmp_path: Path) -> None:
    (tmp_path / "codegen").mkdir()
    (tmp_path / "codegen" / "long.py").write_text("x = 1\n" * (MOST_LINES + 1), encoding="utf-8")
    (tmp_path / "codegen" / "at_the_limit.py").write_text("x = 1\n" * MOST_LINES, encoding="utf-8")
    assert too_long(hand_written_modules(tmp_path), tmp_path) == [f"codegen/long.py: {MOST_LINES + 1} lines"]
