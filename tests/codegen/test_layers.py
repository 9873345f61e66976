"""codegen's parts import only downwards, and across folders only what a folder offers.

The order below is the pipeline's, read bottom up: a part may import from the
parts before it in LAYERS, never from one after it, and from another folder
only the modules that folder's `__init__.py` lists in `__all__`. Imports made
inside functions count too (they are how heavy modules load late, not a way
around the order).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

CODEGEN = Path(__file__).resolve().parents[2] / "codegen"
LAYERS = (
    "messages",
    "config",
    "tree",
    "openapi",
    "contract",
    "envd",
    "upstream",
    "generation",
    "api_changes",
    "pipeline",
    "commands",
    "cli",
    "__main__",
)


def _part(path: Path) -> str:
    rel = path.relative_to(CODEGEN)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every `codegen.*` import in the file, at any depth."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("codegen."):
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if alias.name.startswith("codegen.")]
    return found


def test_every_part_has_a_layer() -> None:
    parts = {_part(path) for path in CODEGEN.rglob("*.py")} - {"__init__"}
    assert parts == set(LAYERS)


def test_no_part_imports_from_one_above_it() -> None:
    upward = []
    for path in sorted(CODEGEN.rglob("*.py")):
        here = _part(path)
        if here == "__init__":
            continue
        for line, module in _imports(path):
            there = module.split(".")[1]
            if LAYERS.index(there) > LAYERS.index(here):
                upward.append(f"{path.relative_to(CODEGEN.parent)}:{line} imports {module}")
    assert upward == []


def test_across_folders_only_what_a_folder_offers() -> None:
    outside = []
    for path in sorted(CODEGEN.rglob("*.py")):
        here = _part(path)
        for line, module in _imports(path):
            parts = module.split(".")
            if len(parts) < 3 or parts[1] == here:
                continue
            offered = importlib.import_module(f"codegen.{parts[1]}").__all__
            if parts[2] not in offered:
                outside.append(f"{path.relative_to(CODEGEN.parent)}:{line} imports {module}, not in {offered}")
    assert outside == []


def test_every_offered_module_exists_and_is_documented() -> None:
    for init in CODEGEN.glob("*/__init__.py"):
        package = importlib.import_module(f"codegen.{init.parent.name}")
        for name in package.__all__:
            assert (init.parent / f"{name}.py").is_file(), f"{init.parent.name}.{name}"
            assert f"`{name}`" in (package.__doc__ or ""), f"{init.parent.name}/__init__.py does not describe {name}"
