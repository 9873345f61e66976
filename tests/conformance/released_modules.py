"""Print, as JSON, the public names each module named on the command line defines in an `e2b` installation.

Run by the released SDK's interpreter (in its own virtualenv). Imports nothing
from this repository. A module's public names are what it defines at its top
level (classes, functions, assignments, not underscored), read from its source
without running it, and what the installation's `e2b/__init__.py` imports from
it (2.x's `SandboxState` is defined by its generated client, exported from
`e2b.sandbox.sandbox_api`). Names a module merely imports for its own use are
not its public names. A module the installation does not have maps to null.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import sys
from pathlib import Path


def _source(module: str) -> Path | None:
    spec = importlib.util.find_spec(module)
    return Path(spec.origin) if spec is not None and spec.origin else None


def defined(module: str) -> set[str]:
    """The public names `module`'s top level binds by a def, a class or an assignment."""
    path = _source(module)
    assert path is not None, module
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {target.id for target in node.targets if isinstance(target, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {name for name in names if not name.startswith("_")}


def exported_by_package() -> dict[str, set[str]]:
    """Module -> the names `e2b/__init__.py` imports from it."""
    path = _source("e2b")
    assert path is not None
    found: dict[str, set[str]] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            module = ("e2b." if node.level else "") + node.module
            found.setdefault(module, set()).update(alias.asname or alias.name for alias in node.names)
    return found


def main(modules: list[str]) -> int:
    exported = exported_by_package()
    answer = {
        module: sorted(defined(module) | exported.get(module, set())) if _source(module) else None for module in modules
    }
    json.dump(answer, sys.stdout, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
