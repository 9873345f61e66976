"""What changed in the Python API that `e2b` users import between two trees: griffe's readings compared.

Both sides are read as source, never imported (python_api.reader); what counts as API: python_api.model.
How it works, and why: docs/maintainers/design.md, "python_api/compare.py".
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from python_api.distributions import Distribution, list_distributions
from python_api.model import KINDS, PARAMETER_KINDS, ApiEntry, Parameter
from toolkit.errors import Problem, ToolError
from toolkit.paths import Project
from toolkit.printable import printable
from toolkit.read import holds_exactly
from toolkit.records import Records, source_of


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


def load_api(package: Distribution, package_dir: Path, *, records: Records | None = None) -> dict[str, ApiEntry]:
    """The public API of the distribution whose files are in `package_dir` (read, never imported).

    With `records` (`api_records`), the answer is remembered by the package's files and read back
    instead of running griffe again on the same files.
    """
    links = sorted(p.relative_to(package_dir).as_posix() for p in package_dir.rglob("*") if p.is_symlink())
    if links:
        raise ToolError(
            Problem(
                f"{package.name}: {printable(', '.join(links[:5]))} in {package_dir} is a symlink; "
                "the Python API check reads no file through one",
                remedy="replace it with the regular file or folder from git, or delete it, then run again",
            )
        )
    # griffe follows a .pth file in its search path (the package's folder) to folders anywhere.
    paths = sorted(p.name for p in package_dir.glob("*.pth"))
    if paths:
        raise ToolError(
            Problem(
                f"{package.name}: {printable(', '.join(paths[:5]))} in {package_dir} is a .pth file, which would "
                "point the Python API check at folders outside the package",
                remedy="delete it (a distribution's folder holds none), then run again",
            )
        )
    files = _package_files(package_dir) if records is not None else {}
    known = _recall(package, files, records)
    if known is None:
        from python_api.reader import read_api

        known = read_api(package, package_dir)
        if records is not None:
            value = {path: [e.kind, e.bases, e.parameters] for path, e in known.items()}
            records.remember(_files_digest(package, files), value)
    return known


def api_records(project: Project) -> Records:
    """Where griffe's readings are remembered: they depend on griffe and on the code that reads and walks."""
    from importlib.metadata import version

    modules = ("python_api.model", "python_api.compare", "python_api.reader")
    return Records(project, "python-api", {"griffe": version("griffe").encode()} | {m: source_of(m) for m in modules})


def _package_files(package_dir: Path) -> dict[str, bytes]:
    """Path in the package -> sha256, for every file griffe may read."""
    return {
        path.relative_to(package_dir).as_posix(): hashlib.sha256(path.read_bytes()).digest()
        for path in package_dir.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }


def _files_digest(package: Distribution, files: Mapping[str, bytes]) -> bytes:
    digest = hashlib.sha256(package.name.encode() + b"\0")
    for rel, sha in sorted(files.items()):
        digest.update(os.fsencode(rel) + b"\0" + sha)
    return digest.digest()


def _recall(package: Distribution, files: Mapping[str, bytes], records: Records | None) -> dict[str, ApiEntry] | None:
    return _entries_from(records.recall(_files_digest(package, files))) if records is not None else None


def _entries_from(value: object) -> dict[str, ApiEntry] | None:
    """The entries a remembered value holds; None when it is not one `load_api` could have written.

    Names and kinds are held to what griffe gives (dotted identifiers, its kinds), so that nothing
    else reaches a report; bases and defaults are source text, escaped wherever they are shown.
    """
    if not isinstance(value, dict):
        return None
    try:
        known = {
            path: ApiEntry(kind, tuple(bases), tuple((name, how, default) for name, how, default in parameters))
            for path, (kind, bases, parameters) in value.items()
        }
    except (ValueError, TypeError):
        return None
    for path, entry in known.items():
        if not (_dotted(path) and entry.kind in KINDS and all(isinstance(base, str) for base in entry.bases)):
            return None
        for name, how, default in entry.parameters:
            if not (_dotted(name) and how in PARAMETER_KINDS and (default is None or isinstance(default, str))):
                return None
    return known


def _dotted(name: object) -> bool:
    return isinstance(name, str) and all(part.isidentifier() for part in name.split("."))


def compare_apis(package: str, old: dict[str, ApiEntry], new: dict[str, ApiEntry]) -> ApiDiff:
    breaks: list[str] = []
    for path, old_entry in old.items():
        new_entry = new.get(path)
        if new_entry is None:
            # A removed class's members are removed with it: name the class alone.
            if path.rpartition(".")[0] not in old or path.rpartition(".")[0] in new:
                breaks.append(f"{path}: {old_entry.kind} removed")
            continue
        breaks.extend(_breaks(path, old_entry, new_entry))
    added = [
        f"{path} ({entry.kind})" for path, entry in new.items() if path not in old and path.rpartition(".")[0] in old
    ]
    for path, entry in new.items():
        if path in old and entry.kind == old[path].kind == "function":
            added.extend(signature_additions(path, list(old[path].parameters), list(entry.parameters)))
    return ApiDiff(package, tuple(breaks), tuple(added))


def _breaks(path: str, old: ApiEntry, new: ApiEntry) -> Iterator[str]:
    if "name" in (old.kind, new.kind):
        return  # an object outside the package on either side: nothing griffe can compare
    if old.kind != new.kind:
        yield f"{path}: was a {old.kind}, now a {new.kind}"
    elif old.kind == "class":
        # Members have their own public paths (walked above); here only what the class itself is.
        if len(new.bases) < len(old.bases):
            yield f"{path}: base class removed ({_value(', '.join(old.bases))} -> {_value(', '.join(new.bases))})"
    elif old.kind == "function":
        yield from signature_breaks(path, list(old.parameters), list(new.parameters))


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


def signature_additions(path: str, old: list[Parameter], new: list[Parameter]) -> Iterator[str]:
    """The parameters `new` adds that no call of `old` has to pass: what callers can now do (minor).

    A required one added is a break (`signature_breaks`), not an addition.
    """
    known = {name for name, _, _ in old}
    for name, kind, default in new:
        if name not in known and (default is not None or kind in _VARIADIC):
            yield f"{path}({name}) (optional parameter)"


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
        raise ToolError(
            Problem(
                f"git archive {commit[:12]} failed: {printable(done.stderr.decode(errors='replace').strip())}",
                remedy="run in a git checkout with the base revision fetched (CI: fetch-depth: 0)",
            )
        )
    try:
        with tarfile.open(fileobj=io.BytesIO(done.stdout)) as archive:
            archive.extractall(into, filter="data")  # refuses absolute paths and links that leave `into`
    except tarfile.TarError as exc:
        raise ToolError(
            Problem(
                f"cannot extract {commit[:12]}'s packages: {printable(str(exc))}",
                remedy="a package at the base revision holds a link out of the repository; compare with another base",
            )
        ) from None


@contextmanager
def base_tree(root: Path, commit: str, packages: Sequence[Distribution]) -> Iterator[Path]:
    """A scratch folder holding the packages as they are at `commit` (removed when done)."""
    with tempfile.TemporaryDirectory(prefix="e2b-api-base-") as tmp:
        present = subprocess.run(
            ["git", "ls-tree", "--name-only", commit, "--", *(p.path for p in packages)],
            cwd=root, capture_output=True, text=True, check=False,
        ).stdout.split()  # fmt: skip
        if present:
            git_tree(root, commit, present, Path(tmp))
        yield Path(tmp)


def diff_package(package: Distribution, old_dir: Path, new_dir: Path, *, records: Records | None = None) -> ApiDiff:
    """The package's API in `old_dir` (a missing folder: a new package, nothing to break) against `new_dir`."""
    old = load_api(package, old_dir, records=records) if old_dir.is_dir() else {}
    new = load_api(package, new_dir, records=records) if new_dir.is_dir() else {}
    if not old:
        return ApiDiff(package.name, (), ())
    return compare_apis(package.name, old, new)


def render(diff: ApiDiff, *, limit: int = 40) -> list[str]:
    """Lines for a terminal or a markdown report."""
    lines = [f"- breaking: `{b}`" for b in diff.breaks[:limit]]
    lines += [f"- added: `{a}`" for a in diff.added[:limit]]
    hidden = max(0, len(diff.breaks) - limit) + max(0, len(diff.added) - limit)
    if hidden:
        lines.append(f"- and {hidden} more")
    return lines


def diff_generated(
    root: Path, generated: Mapping[str, bytes], roots: tuple[str, ...], *, records: Records | None = None
) -> list[ApiDiff]:
    """What replacing the generated folders `roots` with `generated` changes in each package's Python API.

    The old side is the package as the tree holds it; the new side is a scratch
    copy with the generated folders swapped for the staged ones, so only what
    the regeneration changed shows.  `records`: as for `load_api`.
    """
    diffs = []
    for package in list_distributions(root):
        inside = [r for r in roots if r.startswith(package.path + "/")]
        if not inside:
            continue
        if holds_exactly(root, inside, generated):  # the usual bump changes one package: griffe reads the other not
            diffs.append(ApiDiff(package.name, (), ()))
            continue
        old = load_api(package, root / package.path, records=records)
        # The new side: remembered by the files the copy would hold, else read from the copy.
        new = _recall(package, _swapped_files(root, package, inside, generated), records)
        if new is None:
            with _swapped_copy(root, package, inside, generated) as new_dir:
                new = load_api(package, new_dir, records=records)
        diffs.append(compare_apis(package.name, old, new) if old else ApiDiff(package.name, (), ()))
    return diffs


def _swapped_files(
    root: Path, package: Distribution, inside: list[str], generated: Mapping[str, bytes]
) -> dict[str, bytes]:
    """`_package_files` of what `_swapped_copy` would make."""
    swapped = tuple(f"{folder}/" for folder in inside)
    files = {
        rel: sha
        for rel, sha in _package_files(root / package.path).items()
        if not f"{package.path}/{rel}".startswith(swapped)
    }
    for rel, data in generated.items():
        if rel.startswith(swapped):
            files[rel.removeprefix(f"{package.path}/")] = hashlib.sha256(data).digest()
    return files


@contextmanager
def _swapped_copy(
    root: Path, package: Distribution, inside: list[str], generated: Mapping[str, bytes]
) -> Iterator[Path]:
    """A scratch copy of the package with its generated folders `inside` swapped for `generated`'s."""
    with tempfile.TemporaryDirectory(prefix="e2b-api-new-") as tmp:
        new = Path(tmp) / package.path
        shutil.copytree(root / package.path, new, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
        for folder in inside:
            shutil.rmtree(Path(tmp) / folder, ignore_errors=True)
        for rel, data in generated.items():
            if rel.startswith(tuple(f"{folder}/" for folder in inside)):
                (Path(tmp) / rel).parent.mkdir(parents=True, exist_ok=True)
                (Path(tmp) / rel).write_bytes(data)
        yield new
