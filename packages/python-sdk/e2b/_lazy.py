"""Generated modules imported when first used, so that a command loads what it calls and no more.

`e2b sandbox list` needs the listing's operation and its models, not the 16 other operations'
modules and theirs (docs/maintainers/performance.md, "The command line"). Type checkers read the
real imports (the overlays import them under TYPE_CHECKING); at run time a `LazyModule` stands in.
"""

from __future__ import annotations

import importlib
from types import ModuleType


class LazyModule:
    """Stands for the module `name`, imported at the first attribute read (then from sys.modules)."""

    __slots__ = ("_module", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attribute: str) -> object:
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attribute)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"
