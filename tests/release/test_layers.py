"""release's modules import one another without a circle (imports inside functions count too)."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

RELEASE = Path(__file__).resolve().parents[2] / "release"


def imported_release_modules(path: Path) -> set[str]:
    """The release modules `path` imports, anywhere in it (`release.x` as `x`)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
            if node.module == "release":
                names = [f"release.{alias.name}" for alias in node.names]
        found.update(name.split(".")[1] for name in names if name.startswith("release."))
    return found - {path.stem}


def test_release_imports_have_no_circle() -> None:
    graph = {path.stem: imported_release_modules(path) for path in RELEASE.glob("*.py")}
    assert graph["changelog_check"] >= {"api_check", "base"}, graph["changelog_check"]  # the test sees imports
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as circle:
        raise AssertionError(f"release modules import each other in a circle: {circle.args[1]}") from None


def test_a_circle_is_seen(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():\n    from release.b import g\n")
    (tmp_path / "b.py").write_text("from release import a\n")
    graph = {path.stem: imported_release_modules(path) for path in tmp_path.glob("*.py")}
    assert graph == {"a": {"b"}, "b": {"a"}}
