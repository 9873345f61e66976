"""The Python API that `e2b` users import, and what changed in it between two trees (griffe).

A package's public API is what each of its import packages exports (`__all__`,
or the names without a leading `_` when there is none), followed into the
classes and their methods and attributes; plus, for `e2b`, the whole public
tree of the generated client `e2b.api.client` (PUBLIC_TREES): users import its
models and calls, so a renamed model or field there breaks them too.  Names
with a leading `_` (modules and objects) are never API; of the dunders only
`__init__` and `__call__` are (a constructor's signature is API, a repr is not).

Both sides are read as source, never imported (griffe's static analysis:
`allow_inspection=False`): the trees compared are a pull request's.  The old
side is a commit's tree, extracted with `git archive` into a scratch folder;
the new side is the working tree or any folder that holds the package.  No
file is read through a symlink (a link in a package folder is refused).
griffe finds the breaks (removed objects, removed or newly required
parameters, changed defaults, attribute type and value changes, removed base
classes); additions are the public names the new side has and the old lacks.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import griffe

from codegen.printable import printable
from codegen.tree.read import holds_exactly
from release.errors import Problem, ReleaseError
from release.packages import Package, load_packages

# Distribution -> modules whose every public name and public submodule is API.
PUBLIC_TREES: dict[str, tuple[str, ...]] = {"e2b": ("e2b.api.client",)}
_PUBLIC_DUNDERS = frozenset({"__init__", "__call__"})
_MAX_DEPTH = 12  # nested classes and submodules; far beyond any real package


@dataclass(frozen=True)
class ApiDiff:
    """One package's Python API, old side to new side."""

    package: str
    breaks: tuple[str, ...]  # "e2b.SandboxPauseResult.forced: attribute removed"
    added: tuple[str, ...]  # "e2b.api.client.models.NewSandbox.note (attribute)"

    @property
    def level(self) -> str:
        """The semver level the change needs: major for a break, minor for an addition, else none."""
        return "major" if self.breaks else "minor" if self.added else "none"


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


def import_packages(package_dir: Path) -> list[str]:
    """The top-level import packages in a distribution's folder (folders with an __init__.py)."""
    return sorted(p.parent.name for p in package_dir.glob("*/__init__.py") if p.parent.name.isidentifier())


def load_api(package: Package, package_dir: Path) -> dict[str, griffe.Object | griffe.Alias]:
    """The public API of the distribution whose files are in `package_dir` (read, never imported)."""
    links = sorted(p.relative_to(package_dir).as_posix() for p in package_dir.rglob("*") if p.is_symlink())
    if links:
        raise ReleaseError(
            Problem(
                f"{package.name}: {printable(', '.join(links[:5]))} in {package_dir} is a symlink; "
                "the Python API check reads no file through one",
                remedy="replace it with the regular file or folder from git, or delete it, then run again",
            )
        )
    api = _Api()
    trees = PUBLIC_TREES.get(package.name, ())
    for name in import_packages(package_dir):
        with _too_deep_is_one_line(f"{package.name} ({name}) in {package_dir}"):
            try:
                module = griffe.load(
                    name,
                    search_paths=[str(package_dir)],
                    allow_inspection=False,
                    resolve_aliases=True,
                    resolve_external=False,
                    store_source=False,
                )
            except (griffe.GriffeError, ImportError, OSError, SyntaxError) as exc:
                raise ReleaseError(
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
    return api.objects


@contextmanager
def _too_deep_is_one_line(what: str) -> Iterator[None]:
    """griffe recurses on the source's nesting (a 200,000-term expression): said in one line, exit 2."""
    try:
        yield
    except (RecursionError, MemoryError) as exc:
        raise ReleaseError(
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


def _kind(obj: griffe.Object | griffe.Alias) -> str:
    target = _target(obj)
    return "name" if isinstance(target, griffe.Alias) else target.kind.value


def compare_apis(
    package: str, old: dict[str, griffe.Object | griffe.Alias], new: dict[str, griffe.Object | griffe.Alias]
) -> ApiDiff:
    breaks: list[str] = []
    for path, old_obj in old.items():
        new_obj = new.get(path)
        if new_obj is None:
            # A removed class's members are removed with it: name the class alone.
            if path.rpartition(".")[0] not in old or path.rpartition(".")[0] in new:
                breaks.append(f"{path}: {_kind(old_obj)} removed")
            continue
        breaks.extend(_breaks(path, _target(old_obj), _target(new_obj)))
    added = [
        f"{path} ({_kind(obj)})" for path, obj in new.items() if path not in old and path.rpartition(".")[0] in old
    ]
    return ApiDiff(package, tuple(breaks), tuple(added))


def _breaks(path: str, old: griffe.Object | griffe.Alias, new: griffe.Object | griffe.Alias) -> Iterator[str]:
    if isinstance(old, griffe.Alias) or isinstance(new, griffe.Alias):
        return  # an object outside the package on either side: nothing griffe can compare
    if old.kind != new.kind:
        yield f"{path}: was a {old.kind.value}, now a {new.kind.value}"
    elif isinstance(old, griffe.Class) and isinstance(new, griffe.Class):
        # Members have their own public paths (walked above); here only what the class itself is.
        if len(new.bases) < len(old.bases):
            yield f"{path}: base class removed ({_value(', '.join(map(str, old.bases)))} -> " + (
                f"{_value(', '.join(map(str, new.bases)))})"
            )
    elif isinstance(old, griffe.Function) and isinstance(new, griffe.Function):
        yield from signature_breaks(path, _signature(old), _signature(new))


# One parameter as both views see it (griffe's and the interpreter's, release.runtime_api):
# name, kind (a griffe.ParameterKind value), the default's text or None.
Parameter = tuple[str, str, str | None]
_POSITIONAL = frozenset({"positional-only", "positional or keyword"})
_VARIADIC = frozenset({"variadic positional", "variadic keyword"})
# Kind changes that break a caller, griffe's rules: (old kind, new kind).
_KIND_BREAKS = frozenset(
    {
        ("positional-only", "keyword-only"),
        ("keyword-only", "positional-only"),
        ("positional or keyword", "positional-only"),
        ("positional or keyword", "keyword-only"),
    }
)


def _signature(function: griffe.Function) -> list[Parameter]:
    return [
        (p.name, p.kind.value if p.kind else "positional or keyword", None if p.default is None else str(p.default))
        for p in function.parameters
    ]


def signature_breaks(path: str, old: list[Parameter], new: list[Parameter]) -> Iterator[str]:
    """What breaks a call of `old` made to `new`: griffe's rules for a function's parameters.

    Unlike griffe, a named parameter removed is a break even where `**kwargs`
    would swallow it: `pause(force=True)` was documented, and would now mean nothing.
    """
    now = {name: (i, kind, default) for i, (name, kind, default) in reversed(list(enumerate(new)))}
    new_kinds = {kind for _, kind, _ in new}
    for i, (name, kind, default) in enumerate(old):
        if name not in now:
            yield f"{path}({name}): parameter removed"
            continue
        j, new_kind, new_default = now[name]
        plain = kind not in _VARIADIC and new_kind not in _VARIADIC
        if plain and default is not None and new_default is None:
            yield f"{path}({name}): parameter made required"
        if kind in _POSITIONAL and new_kind in _POSITIONAL and i != j:
            yield f"{path}({name}): positional parameter moved"
        into_variadic = (
            new_kind == "variadic keyword" and kind != "keyword-only" and "variadic positional" not in new_kinds
        ) or (new_kind == "variadic positional" and kind != "positional-only" and "variadic keyword" not in new_kinds)
        if (kind, new_kind) in _KIND_BREAKS or (kind != new_kind and into_variadic):
            yield f"{path}({name}): parameter kind changed from {kind} to {new_kind}"
        if plain and default is not None and new_default is not None and default != new_default:
            yield f"{path}({name}): default changed from {_value(default)} to {_value(new_default)}"
    known = {name for name, _, _ in old}
    for name, kind, default in new:
        if name not in known and default is None and kind not in _VARIADIC:
            yield f"{path}({name}): required parameter added"


def _value(value: object) -> str:
    text = printable(str(value))
    return text if len(text) <= 60 else text[:57] + "..."


def git_tree(root: Path, commit: str, paths: list[str], into: Path) -> None:
    """`paths` of `commit` into `into`, from git's object store (no checkout, no network, no links out)."""
    done = subprocess.run(
        ["git", "archive", "--format=tar", commit, "--", *paths],
        cwd=root, capture_output=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise ReleaseError(
            Problem(
                f"git archive {commit[:12]} failed: {printable(done.stderr.decode(errors='replace').strip())}",
                remedy="run in a git checkout with the base revision fetched (CI: fetch-depth: 0)",
            )
        )
    try:
        with tarfile.open(fileobj=io.BytesIO(done.stdout)) as archive:
            archive.extractall(into, filter="data")  # refuses absolute paths and links that leave `into`
    except tarfile.TarError as exc:
        raise ReleaseError(
            Problem(
                f"cannot extract {commit[:12]}'s packages: {printable(str(exc))}",
                remedy="a package at the base revision holds a link out of the repository; compare with another base",
            )
        ) from None


@contextmanager
def base_tree(root: Path, commit: str, packages: list[Package]) -> Iterator[Path]:
    """A scratch folder holding the packages as they are at `commit` (removed when done)."""
    with tempfile.TemporaryDirectory(prefix="e2b-api-base-") as tmp:
        present = subprocess.run(
            ["git", "ls-tree", "--name-only", commit, "--", *(p.path for p in packages)],
            cwd=root, capture_output=True, text=True, check=False,
        ).stdout.split()  # fmt: skip
        if present:
            git_tree(root, commit, present, Path(tmp))
        yield Path(tmp)


def diff_package(package: Package, old_dir: Path, new_dir: Path) -> ApiDiff:
    """The package's API in `old_dir` (a missing folder: a new package, nothing to break) against `new_dir`."""
    old = load_api(package, old_dir) if old_dir.is_dir() else {}
    new = load_api(package, new_dir) if new_dir.is_dir() else {}
    if not old:
        return ApiDiff(package.name, (), ())
    with _too_deep_is_one_line(f"{package.name} ({old_dir} against {new_dir})"):
        return compare_apis(package.name, old, new)


def render(diff: ApiDiff, *, limit: int = 40) -> list[str]:
    """Lines for a terminal or a markdown report."""
    lines = [f"- breaking: `{b}`" for b in diff.breaks[:limit]]
    lines += [f"- added: `{a}`" for a in diff.added[:limit]]
    hidden = max(0, len(diff.breaks) - limit) + max(0, len(diff.added) - limit)
    if hidden:
        lines.append(f"- and {hidden} more")
    return lines


def diff_generated(root: Path, generated: Mapping[str, bytes], roots: tuple[str, ...]) -> list[ApiDiff]:
    """What replacing the generated folders `roots` with `generated` changes in each package's Python API.

    The old side is the package as the tree holds it; the new side is a scratch
    copy with the generated folders swapped for the staged ones, so only what
    the regeneration changed shows.
    """
    diffs = []
    for package in load_packages(root):
        inside = [r for r in roots if r.startswith(package.path + "/")]
        if not inside:
            continue
        if holds_exactly(root, inside, generated):  # the usual bump changes one package: griffe reads the other not
            diffs.append(ApiDiff(package.name, (), ()))
            continue
        with tempfile.TemporaryDirectory(prefix="e2b-api-new-") as tmp:
            new = Path(tmp) / package.path
            shutil.copytree(root / package.path, new, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
            for folder in inside:
                shutil.rmtree(Path(tmp) / folder, ignore_errors=True)
            for rel, data in generated.items():
                if rel.startswith(tuple(f"{folder}/" for folder in inside)):
                    (Path(tmp) / rel).parent.mkdir(parents=True, exist_ok=True)
                    (Path(tmp) / rel).write_bytes(data)
            diffs.append(diff_package(package, root / package.path, new))
    return diffs
