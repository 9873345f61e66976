"""The run-time half of the Python API check, run as a script in a throwaway interpreter (release.runtime_api).

How it works, and why: docs/maintainers/design.md, "release/runtime_probe.py".
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import re
import sys
from types import ModuleType
from typing import Any

PUBLIC_DUNDERS = frozenset({"__init__", "__call__"})  # as python_api.reader
MAX_DEPTH = 12
MAX_OBJECTS = 100_000
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")  # a default's repr is compared across two interpreters
_KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: "positional-only",
    inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional or keyword",
    inspect.Parameter.VAR_POSITIONAL: "variadic positional",
    inspect.Parameter.KEYWORD_ONLY: "keyword-only",
    inspect.Parameter.VAR_KEYWORD: "variadic keyword",
}


def _api_name(name: str) -> bool:
    return not name.startswith("_") or name in PUBLIC_DUNDERS


def _error(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}".splitlines()[0] if str(error) else type(error).__name__
    return text[:300]


def _text(value: object) -> str:
    try:
        text = repr(value)
    except Exception as error:  # a default whose repr fails is still a default
        text = f"<unrepresentable {type(value).__name__}: {_error(error)}>"
    return _ADDRESS.sub("", text)[:200]


def _parameters(obj: object) -> list[list[str | None]] | None:
    """[name, kind, default or None] per parameter; None when the interpreter cannot tell the signature."""
    try:
        signature = inspect.signature(obj)  # type: ignore[arg-type]
    except Exception:
        return None
    return [
        [p.name, _KINDS[p.kind], None if p.default is inspect.Parameter.empty else _text(p.default)]
        for p in signature.parameters.values()
    ]


class Listing:
    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {}  # path -> {"kind": ..., "parameters": ...}
        self.missing: dict[str, str] = {}  # path -> why it is not there (an import or attribute error)
        self.seen: set[int] = set()  # classes and modules walked already (a class exported twice is API once)

    def full(self) -> bool:
        return len(self.objects) >= MAX_OBJECTS

    def walk_object(self, obj: object, path: str, depth: int) -> None:
        if self.full():
            return
        if inspect.ismodule(obj):
            self.objects[path] = {"kind": "module"}
        elif inspect.isclass(obj):
            if id(obj) in self.seen:
                return
            self.seen.add(id(obj))
            self.objects[path] = {"kind": "class"}
            if depth < MAX_DEPTH:
                self.walk_class(obj, path, depth)
        elif callable(obj):
            self.objects[path] = {"kind": "function", "parameters": _parameters(obj)}
        else:
            self.objects[path] = {"kind": "attribute"}

    def walk_class(self, cls: type, path: str, depth: int) -> None:
        names = set(dir(cls))
        for klass in inspect.getmro(cls):  # annotated fields without a class-level value
            names.update(n for n in vars(klass).get("__annotations__", {}) if isinstance(n, str))
        for name in sorted(names):
            if not _api_name(name) or (name.startswith("__") and name not in PUBLIC_DUNDERS):
                continue
            try:
                member = getattr(cls, name)
            except AttributeError:
                self.objects[f"{path}.{name}"] = {"kind": "attribute"}  # annotated only: an instance attribute
                continue
            except Exception as error:
                self.missing[f"{path}.{name}"] = _error(error)
                continue
            self.walk_object(member, f"{path}.{name}", depth + 1)

    def walk_exports(self, module: ModuleType, path: str) -> None:
        """A module's exports: `__all__` (each must resolve), else the public names it defines itself."""
        self.objects[path] = {"kind": "module"}
        exports = vars(module).get("__all__")
        if isinstance(exports, (list, tuple)):
            for name in [n for n in exports if isinstance(n, str) and _api_name(n)]:
                try:
                    value = getattr(module, name)
                except Exception as error:  # `from package import *` fails the same way
                    self.missing[f"{path}.{name}"] = _error(error)
                    continue
                self.walk_object(value, f"{path}.{name}", 0)
            return
        for name, value in sorted(vars(module).items()):
            if not name.startswith("_") and not inspect.ismodule(value) and self._defined_in(value, module):
                self.walk_object(value, f"{path}.{name}", 0)

    def walk_tree(self, module: ModuleType, path: str, depth: int) -> None:
        """A module, every public name in it and every public submodule below it (imported here)."""
        if id(module) in self.seen or self.full():
            return
        self.seen.add(id(module))
        self.objects[path] = {"kind": "module"}
        exports = vars(module).get("__all__")
        listed = {n for n in exports if isinstance(n, str)} if isinstance(exports, (list, tuple)) else set()
        for name in sorted({*vars(module), *listed}):
            if name.startswith("_"):
                continue
            try:  # a listed name may be bound only when first read (a module `__getattr__`, PEP 562)
                value = getattr(module, name) if name in listed else vars(module)[name]
            except Exception as error:
                self.missing[f"{path}.{name}"] = _error(error)
                continue
            if inspect.ismodule(value):
                continue
            if name in listed or self._defined_in(value, module):
                self.walk_object(value, f"{path}.{name}", depth + 1)
        if depth >= MAX_DEPTH or not hasattr(module, "__path__"):
            return
        for info in sorted(pkgutil.iter_modules(module.__path__), key=lambda i: i.name):
            if not info.name.startswith("_"):
                sub = self.load(f"{module.__name__}.{info.name}", f"{path}.{info.name}")
                if sub is not None:
                    self.walk_tree(sub, f"{path}.{info.name}", depth + 1)

    def load(self, name: str, path: str) -> ModuleType | None:
        try:
            module = importlib.import_module(name)
        except BaseException as error:  # SystemExit and KeyboardInterrupt from an import too: a module not there
            self.missing[path] = _error(error)
            return None
        if not isinstance(module, ModuleType):  # `sys.modules[__name__] = None`, or any other object
            self.missing[path] = f"import {name} gives {_text(module)}, not a module"
            return None
        return module

    @staticmethod
    def _defined_in(value: object, module: ModuleType) -> bool:
        """Not imported from elsewhere, as far as the interpreter can tell (griffe skips imports likewise)."""
        home = getattr(value, "__module__", None) if inspect.isclass(value) or inspect.isroutine(value) else None
        return home is None or home == module.__name__


def main(argv: list[str]) -> int:
    with open(argv[1], encoding="utf-8") as file:
        request = json.load(file)
    del sys.path[0]  # this script's folder (a copy of it alone): the package imports nothing from there
    # No bytecode written into the tree, as PYTHONDONTWRITEBYTECODE does in many containers; not `-B`
    # (a flag in sys.flags) nor a pycache_prefix, under which every module, site-packages' too, is
    # compiled again on each run (2 s for e2b's two sides became 9 s).
    sys.dont_write_bytecode = True
    sys.path[:0] = request["paths"]
    sys.path.extend(request["site"])
    listing = Listing()
    for name in request["packages"]:
        module = listing.load(name, name)
        if module is None:
            continue
        listing.walk_exports(module, name)
        for tree in request["trees"]:
            if tree.startswith(name + "."):
                sub = listing.load(tree, tree)
                if sub is not None:
                    listing.walk_tree(sub, tree, 0)
    with open(request["out"], "w", encoding="utf-8") as out:
        json.dump({"objects": listing.objects, "missing": listing.missing}, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
