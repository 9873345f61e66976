"""The repository's packages import one another only downwards (imports inside functions count too).

The tools: toolkit/ is the floor, python_api/ stands on it, codegen/ and release/ on both and
never on each other. The distributions: the `e2b` command stands on the SDK, the local server on
neither, and none of them on a tool. Inside a package, a generated folder is a floor of its own: it imports nothing
hand-written. codegen's own order is tests/codegen/test_layers.py's.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Each package, where it lives, and the packages of this repository it may import.
PACKAGES: dict[str, tuple[str, frozenset[str]]] = {
    "toolkit": ("toolkit", frozenset()),
    "python_api": ("python_api", frozenset({"toolkit"})),
    "codegen": ("codegen", frozenset({"toolkit", "python_api"})),
    "release": ("release", frozenset({"toolkit", "python_api"})),
    "e2b": ("packages/python-sdk/e2b", frozenset()),
    "e2b_cli": ("packages/cli/e2b_cli", frozenset({"e2b"})),
    "e2b_local_api": ("packages/local-api/e2b_local_api", frozenset()),
}
# The toolkit's modules, bottom up: each imports only the ones before it.
TOOLKIT = (
    "printable",
    "errors",
    "read",
    "changelog",
    "paths",
    "runtime_record",
    "transaction",
    "cache_folder",
    "records",
)
# Floors inside a package: (the floor, what outside it in its package it may import).
FLOORS = (
    ("e2b.api.client", ()),  # the generated client
    ("e2b_local_api.wire", ()),  # the generated wire models
    ("e2b._transport", ("e2b._exceptions", "e2b.api.error_codes")),  # the retrying transport, below the sandbox
)


def imported(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every absolute import in the file, at any depth."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return found


def _modules(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


@pytest.mark.parametrize("package", list(PACKAGES))
def test_a_package_imports_only_the_packages_below_it(package: str) -> None:
    folder, allowed = PACKAGES[package]
    upward = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in _modules(folder)
        for line, module in imported(path)
        if (top := module.split(".")[0]) in PACKAGES and top != package and top not in allowed
    ]
    assert upward == []


def test_the_toolkit_s_modules_import_only_downwards() -> None:
    upward = []
    for path in _modules("toolkit"):
        if path.stem == "__init__":
            continue
        for line, module in imported(path):
            if _within(module, "toolkit") and TOOLKIT.index(module.split(".")[1]) >= TOOLKIT.index(path.stem):
                upward.append(f"toolkit/{path.name}:{line} imports {module}")
    assert {p.stem for p in _modules("toolkit")} - {"__init__"} == set(TOOLKIT)
    assert upward == []


@pytest.mark.parametrize(("floor", "allowed"), FLOORS)
def test_a_floor_inside_a_package_imports_nothing_above_it(floor: str, allowed: tuple[str, ...]) -> None:
    package = floor.split(".")[0]
    folder = Path(PACKAGES[package][0]) / Path(*floor.split(".")[1:])
    above = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in _modules(str(folder))
        for line, module in imported(path)
        if _within(module, package) and not _within(module, floor) and module not in allowed
    ]
    assert _modules(str(folder)), f"{folder} holds no module: update FLOORS"
    assert above == []


def test_an_upward_import_is_seen(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("import os\n\ndef f():\n    from release.cli import main\n    import codegen.cli\n")
    assert imported(module) == [(1, "os"), (4, "release.cli"), (5, "codegen.cli")]
