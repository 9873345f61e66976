"""The repository's packages import one another only downwards (imports inside functions count too).

The tools: toolkit/ is the floor, python_api/ stands on it, codegen/ and release/ on both and
never on each other. The distributions: the `e2b` command stands on the SDK, the local server on
neither, and none of them on a tool. Inside a package, a generated folder is a floor of its own: it imports nothing
hand-written; the SDK's sync twins, derived from its async modules, import what their sources import, renamed.
The local server's subpackages are floors (LOCAL_API_FLOORS). codegen's own order is tests/codegen/test_layers.py's.
No hand-written modules import one another round a circle, inside a folder either.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

import pytest

from codegen.generation.unasync import twin_path, unasync_source
from toolkit.paths import ASYNC_SOURCE_DIR, GENERATED_ROOTS

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
    "signals",
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
    ("e2b.envd", ()),  # envd's generated messages and Connect clients, the SDK's
    ("e2b_local_api.wire.envd", ()),  # the same, the local server's: not even the wire models
    ("e2b._transport", ("e2b._exceptions", "e2b.api.error_codes")),  # the retrying transport, below the sandbox
)

# The local server's floors, bottom up: a subpackage imports only the floors before it, never one beside it
# (control/ and dataplane/ share a floor). "" is the package's own top: __init__, app, cli, launcher.
LOCAL_API_FLOORS: tuple[tuple[str, ...], ...] = (
    ("wire",),  # the generated models
    ("http",),  # hardening and request plumbing
    ("state",),  # what the server remembers
    ("runtime",),  # the sandboxes' folders and processes
    ("control", "dataplane"),  # the two APIs
    ("",),  # assembly and the command
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


def imported_resolved(path: Path, package: list[str]) -> list[tuple[int, str]]:
    """`imported`, and every relative import too, as the absolute module it names (`package`: the file's)."""
    found = imported(path)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level > 0:
            base = package[: len(package) - (node.level - 1)]
            found.append((node.lineno, ".".join([*base, *([node.module] if node.module else [])])))
    return sorted(found)


def _package_of(path: Path, package: str) -> list[str]:
    return [package, *path.relative_to(ROOT / PACKAGES[package][0]).parent.parts]


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
        for line, module in imported_resolved(path, _package_of(path, package))
        if _within(module, package) and not _within(module, floor) and module not in allowed
    ]
    assert _modules(str(folder)), f"{folder} holds no module: update FLOORS"
    assert above == []


def _local_api_part(module: str) -> str:
    """The subpackage of e2b_local_api a dotted module lies in; "" for the package's top modules."""
    parts = module.split(".")
    sub = parts[1] if len(parts) > 1 else ""
    return sub if (ROOT / PACKAGES["e2b_local_api"][0] / sub).is_dir() else ""


def test_the_local_server_s_floors_import_only_downwards() -> None:
    level = {part: n for n, floor in enumerate(LOCAL_API_FLOORS) for part in floor}
    folder = ROOT / PACKAGES["e2b_local_api"][0]
    subpackages = {path.name for path in folder.iterdir() if (path / "__init__.py").is_file()}
    assert subpackages == set(level) - {""}, "a new subpackage needs a floor in LOCAL_API_FLOORS"
    upward = []
    for path in _modules(PACKAGES["e2b_local_api"][0]):
        here = _local_api_part("e2b_local_api." + ".".join(path.relative_to(folder).with_suffix("").parts))
        for line, module in imported(path):
            there = _local_api_part(module) if _within(module, "e2b_local_api") else None
            if there is not None and there != here and level[there] >= level[here]:
                upward.append(f"{path.relative_to(ROOT)}:{line} ({here or 'top'}) imports {module}")
    assert upward == []


def test_the_local_server_s_floors_hold_modules() -> None:
    # A floor that lost its modules to another (or was never filled) is named here, so the list stays true.
    folder = ROOT / PACKAGES["e2b_local_api"][0]
    empty = [part for floor in LOCAL_API_FLOORS for part in floor if part and not list((folder / part).glob("*.py"))]
    assert empty == []


def test_a_relative_import_is_seen_as_the_module_it_names(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("from . import process_pb\nfrom ...api import client\nfrom .. import x\n")
    assert imported_resolved(module, ["e2b", "envd", "process"]) == [
        (1, "e2b.envd.process"),
        (2, "e2b.api"),  # out of the floor e2b.envd
        (3, "e2b.envd"),
    ]


def test_an_upward_import_is_seen(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("import os\n\ndef f():\n    from release.cli import main\n    import codegen.cli\n")
    assert imported(module) == [(1, "os"), (4, "release.cli"), (5, "codegen.cli")]


def _as_twin_imports(module: str) -> str:
    """The module a twin imports where its source imports `module`: the table applied to the import."""
    (line,) = unasync_source(f"import {module}\n".encode()).splitlines()
    return line.removeprefix("import ")


@pytest.mark.parametrize("source", [p.relative_to(ROOT).as_posix() for p in _modules(ASYNC_SOURCE_DIR)])
def test_a_sync_twin_imports_only_what_its_async_source_may(source: str) -> None:
    """So the twins' folder sits where the async modules sit in test_a_package_imports_only_the_packages_below_it."""
    allowed = {_as_twin_imports(module) for _, module in imported(ROOT / source)}
    twin = ROOT / twin_path(source)
    assert twin.is_file(), f"{twin_path(source)} is missing: run `nox -s codegen`"
    assert [f"{twin_path(source)}:{line} imports {m}" for line, m in imported(twin) if m not in allowed] == []


# --- import circles -------------------------------------------------------------------------------


def module_files(package: str, folder: Path) -> dict[str, Path]:
    """Dotted name -> file of every module of the package in `folder` (a package's name is its __init__'s)."""
    found = {}
    for path in sorted(folder.rglob("*.py")):
        parts = (package, *path.relative_to(folder).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def import_edges(name: str, path: Path, known: Mapping[str, Path]) -> set[str]:
    """The modules of `known` that the module imports, at any depth (in functions, under TYPE_CHECKING).

    `from p import m` is an import of the module p.m when there is one, else of p; a relative import
    is read from where the module is; importing a.b.c counts as importing the closest known of them.
    """
    here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    targets: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*here[: len(here) - node.level + 1], *([base] if base else [])])
            targets += [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
    edges = set()
    for target in targets:
        while target not in known and "." in target:
            target = target.rsplit(".", 1)[0]
        if target in known and target != name:
            edges.add(target)
    return edges


def import_circles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Each group of modules that import one another round a circle (Tarjan's strongly connected components)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(module: str) -> None:
        order[module] = low[module] = len(order)
        stack.append(module)
        for other in sorted(graph[module]):
            if other not in order:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], order[other])
        if low[module] == order[module]:
            group = stack[stack.index(module) :]
            del stack[stack.index(module) :]
            if len(group) > 1:
                circles.append(sorted(group))

    for module in sorted(graph):
        if module not in order:
            visit(module)
    return sorted(circles)


def test_no_hand_written_module_is_in_an_import_circle() -> None:
    modules = {
        name: path
        for package, (folder, _) in PACKAGES.items()
        for name, path in module_files(package, ROOT / folder).items()
    }
    graph = {name: import_edges(name, path, modules) for name, path in modules.items()}
    # Generated code is the generators' to order (openapi-python-client imports the models of a recursive
    # schema inside functions, each from the other); it imports nothing hand-written, so a circle
    # that passes through hand-written code lies wholly in it.
    generated = tuple(ROOT / root for root in GENERATED_ROOTS)
    hand_written = {name for name, path in modules.items() if not any(path.is_relative_to(r) for r in generated)}
    assert {name.split(".")[0] for name in hand_written} == set(PACKAGES)
    assert [circle for circle in import_circles(graph) if hand_written.intersection(circle)] == []


def test_a_circle_inside_a_folder_is_seen(tmp_path: Path) -> None:
    folder = tmp_path / "pkg"
    files = {
        "__init__.py": "",
        "a.py": "from pkg import b\n",
        "b.py": "def f():\n    from pkg.a import x  # inside a function: still a circle\n",
        "c.py": "from .d import y\n",
        "d.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.c\n",
        "e.py": "from pkg import a, c\n",  # imports both circles: not in either
        "sub/__init__.py": "from .. import e\n",
    }
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")
    modules = module_files("pkg", folder)
    graph = {name: import_edges(name, path, modules) for name, path in modules.items()}
    assert graph["pkg.sub"] == {"pkg.e"} and graph["pkg.e"] == {"pkg.a", "pkg.c"}
    assert import_circles(graph) == [["pkg.a", "pkg.b"], ["pkg.c", "pkg.d"]]
