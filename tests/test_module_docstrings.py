"""The tools' modules open with a short docstring; the design behind one is a section of design.md.

A docstring says what its module is for in a line or a few, and a package's `__init__.py` keeps
its map; how a module works and why is docs/maintainers/design.md's, a section titled by the
module's path (its own, or the module it serves), which the docstring names.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ("codegen", "toolkit", "python_api", "release")
MOST_LINES = 10
DESIGN = ROOT / "docs" / "maintainers" / "design.md"
POINTER = re.compile(r'How it works, and why: docs/maintainers/design\.md, "([^"]+)"\.')


def _modules() -> list[Path]:
    return sorted(path for tool in TOOLS for path in (ROOT / tool).rglob("*.py"))


def _docstring(path: Path) -> str | None:
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=False)


def test_every_module_opens_with_a_short_docstring() -> None:
    long, missing = [], []
    for path in _modules():
        doc = _docstring(path)
        if doc is None:
            missing.append(str(path.relative_to(ROOT)))
        elif len(doc.strip().splitlines()) > MOST_LINES:
            long.append(f"{path.relative_to(ROOT)}: {len(doc.strip().splitlines())} lines")
    assert missing == []
    assert long == [], f"move the design into {DESIGN.relative_to(ROOT)} and point there"


def test_a_module_s_pointer_names_a_module_s_section_of_design_md() -> None:
    sections = set(re.findall(r"^## (.+)$", DESIGN.read_text(encoding="utf-8"), flags=re.M))
    wrong = []
    for path in _modules():
        rel = path.relative_to(ROOT).as_posix()
        for named in POINTER.findall(_docstring(path) or ""):
            if named not in sections or not (ROOT / named).is_file():
                wrong.append(f"{rel} points at {named!r}")
    assert wrong == []
    assert any(POINTER.search(_docstring(path) or "") for path in _modules())  # the pattern still matches
