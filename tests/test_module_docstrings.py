"""Every hand-written module opens with a short docstring; the design behind one is a section of a docs page.

A docstring says what its module is for in a line or a few, and a package's `__init__.py` keeps
its map; how a module works and why is a docs page's section titled by the module's path (its own,
or the module it serves), which the docstring names: docs/maintainers/design.md for the tools,
docs/maintainers/packages.md for the packages (`e2b`, `e2b_cli`, `e2b_local_api`). Generated
folders are not read.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from toolkit.paths import GENERATED_ROOTS

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ("codegen", "toolkit", "python_api", "release")
PACKAGES = ("packages/python-sdk/e2b", "packages/cli/e2b_cli", "packages/local-api/e2b_local_api")
MOST_LINES = 10
DESIGN = ROOT / "docs" / "maintainers" / "design.md"
POINTER = re.compile(r'How it works, and why: docs/maintainers/design\.md, "([^"]+)"\.')
# Any docs page, optionally one of its sections: "How it works, and why: docs/users/x.md." or "..., "section".".
PAGE_POINTER = re.compile(r'How it works, and why: (docs/[\w/.-]+\.md)(?:, "([^"]+)")?\.')


def _generated(path: Path) -> bool:
    rel = path.relative_to(ROOT).as_posix()
    return any(rel.startswith(root + "/") for root in GENERATED_ROOTS)


def _modules() -> list[Path]:
    return sorted(path for tool in TOOLS for path in (ROOT / tool).rglob("*.py"))


def _package_modules() -> list[Path]:
    return sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py") if not _generated(path))


def _docstring(path: Path) -> str | None:
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=False)


def test_every_module_opens_with_a_short_docstring() -> None:
    long, missing = [], []
    for path in _modules() + _package_modules():
        doc = _docstring(path)
        if doc is None:
            missing.append(str(path.relative_to(ROOT)))
        elif len(doc.strip().splitlines()) > MOST_LINES:
            long.append(f"{path.relative_to(ROOT)}: {len(doc.strip().splitlines())} lines")
    assert missing == []
    assert long == [], "move the design into a docs page's section (docs/maintainers/) and point there"


def test_generated_folders_are_not_read() -> None:
    read = {path.relative_to(ROOT).as_posix() for path in _package_modules()}
    assert "packages/python-sdk/e2b/_http.py" in read
    assert not any(name.startswith(GENERATED_ROOTS) for name in read)


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


def test_a_package_module_s_pointer_names_a_page_and_its_section() -> None:
    wrong = []
    for path in _package_modules():
        rel = path.relative_to(ROOT).as_posix()
        for page, section in PAGE_POINTER.findall(_docstring(path) or ""):
            headings = set()
            if (ROOT / page).is_file():
                headings = set(re.findall(r"^#+ (.+)$", (ROOT / page).read_text(encoding="utf-8"), flags=re.M))
            if not (ROOT / page).is_file() or (section and section not in headings):
                wrong.append(f"{rel} points at {page}, {section!r}")
            elif section.endswith(".py") and not (ROOT / section).is_file():
                wrong.append(f"{rel}'s section {section!r} names no module")
    assert wrong == []
    assert any(PAGE_POINTER.search(_docstring(path) or "") for path in _package_modules())  # the pattern matches
