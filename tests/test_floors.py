"""The top-level packages stand on one another in floors: toolkit/ at the bottom, python_api/ on it, codegen/
and release/ on both; codegen imports nothing of release (issue 32). Imports inside functions count too."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Each package -> the repository's packages it may import (itself included).
MAY_IMPORT = {
    "toolkit": {"toolkit"},
    "python_api": {"python_api", "toolkit"},
    "codegen": {"codegen", "python_api", "toolkit"},
    # release/make_release.py runs codegen's generated-files check in process: the one edge left upwards.
    "release": {"release", "python_api", "toolkit", "codegen"},
}


def imported_packages(path: Path) -> set[str]:
    """The top-level names of every absolute import in `path`, anywhere in it."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name.partition(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.partition(".")[0])
    return found


def test_each_package_imports_only_the_floors_below_it() -> None:
    ours = set(MAY_IMPORT) | {"tests", "benchmarks"}
    wrong = [
        f"{path.relative_to(ROOT)} imports {sorted(imported & ours - allowed)}"
        for package, allowed in MAY_IMPORT.items()
        for path in sorted((ROOT / package).rglob("*.py"))
        if (imported := imported_packages(path)) & ours - allowed
    ]
    assert wrong == []


def test_an_import_across_floors_is_seen(tmp_path: Path) -> None:
    module = tmp_path / "bump.py"
    module.write_text("import toolkit.paths\n\ndef f():\n    from release.python_api import render\n")
    assert imported_packages(module) == {"toolkit", "release"}
