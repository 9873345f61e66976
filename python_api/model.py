"""The Python API as data: which names are API, and what the comparison keeps of each.

A package's public API is what each of its import packages exports (`__all__`, or the names
without a leading `_`), followed into classes; for `e2b` also the whole generated client and its
error codes (PUBLIC_TREES). Of the dunders only `__init__` and `__call__` are API.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# Distribution -> modules whose every public name and public submodule is API.
# e2b.api.error_codes: a constant per error code the spec documents, which callers compare `error_code` with.
PUBLIC_TREES: dict[str, tuple[str, ...]] = {"e2b": ("e2b.api.client", "e2b.api.error_codes")}

# griffe's kinds of object (griffe.Kind's values), and "name": an object outside the package.
KINDS = frozenset({"module", "class", "function", "attribute", "alias", "type alias", "name"})
# griffe.ParameterKind's values.
PARAMETER_KINDS = frozenset(
    {"positional-only", "positional or keyword", "variadic positional", "keyword-only", "variadic keyword"}
)

# One parameter as both views see it (griffe's and the interpreter's, release/runtime_api.py):
# name, kind (a griffe.ParameterKind value), the default's text or None.
Parameter = tuple[str, str, str | None]


@dataclass(frozen=True)
class ApiEntry:
    """What the comparison needs of one public object, as plain data (so that it can be remembered)."""

    kind: str  # griffe's kind ("module", "class", "function", "attribute"...); "name": outside the package
    bases: tuple[str, ...] = ()  # a class's base classes, as written
    parameters: tuple[Parameter, ...] = ()  # a function's


def import_packages(package_dir: Path) -> list[str]:
    """The top-level import packages in a distribution's folder (folders with an __init__.py)."""
    return sorted(p.parent.name for p in package_dir.glob("*/__init__.py") if p.parent.name.isidentifier())
