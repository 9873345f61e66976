"""What griffe reads of a package's public API, as `ApiEntry` records (python_api.compare compares them)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import griffe

from python_api.distributions import Distribution
from python_api.model import PUBLIC_TREES, ApiEntry, Parameter, import_packages
from toolkit.errors import Problem, ToolError
from toolkit.printable import printable

_PUBLIC_DUNDERS = frozenset({"__init__", "__call__"})
_MAX_DEPTH = 12  # nested classes and submodules; far beyond any real package


@dataclass
class _Api:
    """Public path -> the object it names (aliases resolved where they can be)."""

    objects: dict[str, griffe.Object | griffe.Alias] = field(default_factory=dict)
    # Where each object was first reached: a class exported twice (a package
    # and its submodule) is API once, under the path found first.
    seen: set[str] = field(default_factory=set)

    def first(self, obj: griffe.Object | griffe.Alias) -> bool:
        key = _target(obj).path
        if key in self.seen:
            return False
        self.seen.add(key)
        return True


def read_api(package: Distribution, package_dir: Path) -> dict[str, ApiEntry]:
    """The public API of the distribution whose files are in `package_dir` (python_api.model says which names)."""
    api = _Api()
    entries: dict[str, ApiEntry] = {}
    trees = PUBLIC_TREES.get(package.name, ())
    for name in import_packages(package_dir):
        with _too_deep_is_one_line(f"{package.name} ({name}) in {package_dir}"):
            try:
                module = griffe.load(
                    name,
                    search_paths=[str(package_dir)],
                    try_relative_path=False,  # never a package in the working directory instead
                    allow_inspection=False,
                    resolve_aliases=True,
                    resolve_external=False,
                    store_source=False,
                )
            except (griffe.GriffeError, ImportError, OSError, SyntaxError) as exc:
                raise ToolError(
                    Problem(
                        f"cannot read the Python API of {package.name} ({name}) in {package_dir}: "
                        f"{printable(str(exc))}",
                        remedy="fix the package's source so that it parses",
                    )
                ) from None
            _walk_exports(api, module, name)
            for tree in trees:
                if tree.startswith(name + "."):
                    sub = _member(module, tree.removeprefix(name + "."))
                    if sub is not None:
                        _walk_tree(api, sub, tree, 0)
            # Inside the guard: a base class's or a default's text is griffe's recursion too.
            entries |= {path: _entry(obj) for path, obj in api.objects.items() if path not in entries}
    return entries


def _entry(obj: griffe.Object | griffe.Alias) -> ApiEntry:
    target = _target(obj)
    if isinstance(target, griffe.Alias):
        return ApiEntry("name")
    if isinstance(target, griffe.Class):
        return ApiEntry(target.kind.value, bases=tuple(str(base) for base in target.bases))
    if isinstance(target, griffe.Function):
        return ApiEntry(target.kind.value, parameters=tuple(_signature(target)))
    return ApiEntry(target.kind.value)


@contextmanager
def _too_deep_is_one_line(what: str) -> Iterator[None]:
    """griffe recurses on the source's nesting (a 200,000-term expression): said in one line, exit 2."""
    try:
        yield
    except (RecursionError, MemoryError) as exc:
        raise ToolError(
            Problem(
                f"cannot read the Python API of {what}: {type(exc).__name__}: {printable(str(exc))} "
                "(source nested too deeply or too large to analyse; simplify that expression)"
            )
        ) from None


def _member(obj: griffe.Object | griffe.Alias, dotted: str) -> griffe.Object | griffe.Alias | None:
    for part in dotted.split("."):
        found = _target(obj).members.get(part)
        if found is None:
            return None
        obj = found
    return obj


def _target(obj: griffe.Object | griffe.Alias) -> griffe.Object | griffe.Alias:
    if isinstance(obj, griffe.Alias):
        try:
            return obj.final_target
        except (griffe.AliasResolutionError, griffe.CyclicAliasError):
            return obj  # outside the package (a dependency's class): opaque
    return obj


def _is_api_name(name: str) -> bool:
    return not name.startswith("_") or name in _PUBLIC_DUNDERS


def _walk_exports(api: _Api, module: griffe.Object | griffe.Alias, path: str) -> None:
    """A module's exports: `__all__`, else its public names that are not submodules."""
    api.objects[path] = module  # so that a new export reads as an addition to a known module
    exports = module.exports
    if exports is not None:
        names = [n for n in exports if isinstance(n, str)]
    else:
        names = [n for n, m in module.members.items() if not isinstance(m, griffe.Alias) and not m.is_module]
    for name in names:
        member = module.members.get(name)
        if member is not None and _is_api_name(name):
            _walk_object(api, member, f"{path}.{name}", 0)


def _walk_tree(api: _Api, module: griffe.Object | griffe.Alias, path: str, depth: int) -> None:
    """A module, every public name in it and every public submodule below it."""
    api.objects[path] = module
    if depth > _MAX_DEPTH:
        return
    target = _target(module)
    for name, member in target.members.items():
        if not _is_api_name(name) or name.startswith("__"):
            continue
        if isinstance(member, griffe.Alias):
            if member.is_public:  # an import, public only when the module's `__all__` names it
                _walk_object(api, member, f"{path}.{name}", depth + 1)
        elif member.is_module:
            _walk_tree(api, member, f"{path}.{name}", depth + 1)
        elif member.is_public:
            _walk_object(api, member, f"{path}.{name}", depth + 1)


def _walk_object(api: _Api, obj: griffe.Object | griffe.Alias, path: str, depth: int) -> None:
    if not api.first(obj):
        return
    api.objects[path] = obj
    target = _target(obj)
    if depth > _MAX_DEPTH or not isinstance(target, griffe.Class):
        return
    for name, member in target.all_members.items():
        if _is_api_name(name) and (name in _PUBLIC_DUNDERS or not name.startswith("__")):
            _walk_object(api, member, f"{path}.{name}", depth + 1)


def _signature(function: griffe.Function) -> list[Parameter]:
    return [
        (p.name, p.kind.value if p.kind else "positional or keyword", None if p.default is None else str(p.default))
        for p in function.parameters
    ]
