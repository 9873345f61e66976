"""The last step: write the staged output over the tree, or compare with it.

Writing swaps whole generated folders and the single files into place in one
transaction (toolkit/transaction.py): an error, Ctrl-C, SIGTERM or a crash
leaves the tree, after the next run at the latest, fully old or fully new.
A release writes through the same transaction (release/tree.py), so what an
interrupted write may name, and where its leftovers lie, is decided here for
both (`is_write_target`, `leftover_folders`).  Nothing here reads or writes through a
symlink.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.errors import Problem, ToolError
from toolkit.paths import (
    ASYNC_SOURCE_DIR,
    CONTRACT,
    ENVD_DIR,
    ENVD_LOCK,
    GENERATED_ROOTS,
    LOCK,
    MANIFEST,
    OPERATIONS,
    PYPROJECT,
    RUNTIME_REF,
    SPEC,
    TEMPLATES,
    is_write_target,
    leftover_folders,
    read_manifest_paths,
)
from toolkit.read import read_or_none
from toolkit.transaction import Content, leftovers, swap_into_place

if TYPE_CHECKING:  # stage imports the generators and jinja: not needed to compare a tree
    from codegen.tree.staged import Staged

# What the pipeline reads or writes besides the generated folders.  None of it
# may be, or lie under, a symlink: a pull request could otherwise point a path
# at /proc/self/environ and have the check print it into the job log.
PROTECTED_FILES = (PYPROJECT, SPEC, RUNTIME_REF, LOCK, MANIFEST, CONTRACT, OPERATIONS, ENVD_LOCK)
PROTECTED_FOLDERS = (TEMPLATES, *GENERATED_ROOTS, ENVD_DIR, ASYNC_SOURCE_DIR)


def find_symlinks(root: Path) -> list[str]:
    """Every symlink at or under a protected path (the link itself is named; it is never followed)."""
    found: set[str] = set()
    for rel in (*PROTECTED_FILES, *PROTECTED_FOLDERS):
        link = first_symlink(root, rel)
        if link is not None:
            found.add(link)
        elif rel in PROTECTED_FOLDERS:
            for dirpath, dirnames, filenames in os.walk(root / rel):  # never descends into a link
                for name in (*dirnames, *filenames):
                    if os.path.islink(os.path.join(dirpath, name)):
                        found.add(Path(dirpath, name).relative_to(root).as_posix())
    return sorted(found)


def first_symlink(root: Path, rel: str) -> str | None:
    """The first component of `rel`, from `root` down, that is a symlink (relative to root), or None."""
    current = root
    for part in rel.split("/"):
        current = current / part
        if current.is_symlink():
            return current.relative_to(root).as_posix()
        if not current.exists():
            return None
    return None


def _under(path: str, links: list[str]) -> bool:
    return any(path == link or path.startswith(link + "/") for link in links)


def tree_files(root: Path, folder: str, index: Mapping[str, str] | None) -> Iterator[str]:
    """Regular files under a generated folder, whatever their name; symlinks are never followed or listed.

    Only the bytecode that imports leave behind is skipped: a `.pyc` inside a
    `__pycache__` folder that git's `index` (from `index_entries`) does not hold.
    Tracked, it is part of what a commit ships (and what `import` runs), so it is
    listed like any file; outside a git checkout (`index` None) nothing can tell,
    so it is listed too.
    """
    base = root / folder
    if base.is_symlink() or not base.is_dir():
        return
    found = []
    for dirpath, _, filenames in os.walk(base):
        for name in filenames:
            path = Path(dirpath, name)
            if not path.is_symlink() and path.is_file():
                found.append(path.relative_to(root).as_posix())
    if index is not None:
        found = [p for p in found if p in index or not _is_import_bytecode(p)]
    yield from sorted(found)


def _is_import_bytecode(rel: str) -> bool:
    """Where Python's import system writes its cache: `<folder>/__pycache__/<module>.<tag>.pyc`."""
    folder, _, name = rel.rpartition("/")
    return folder.rpartition("/")[2] == "__pycache__" and name.endswith(".pyc")


# What runs git on the tree: only the tree's own repository, never an ambient
# GIT_DIR / GIT_INDEX_FILE, and no configuration that runs a program.
_GIT_SETTINGS = ("-c", "core.fsmonitor=false", "-c", "core.quotePath=false")
_REGULAR_MODES = ("100644", "100755")


def index_entries(root: Path) -> dict[str, str] | None:
    """Path -> mode of every entry git's index holds under the generated folders; None outside a git checkout.

    One `git ls-files` for all of them: the cached check pays it once.
    """
    if not os.path.lexists(root / ".git"):
        return None
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_TERMINAL_PROMPT="0", GIT_LITERAL_PATHSPECS="1"
    )
    done = subprocess.run(
        ["git", *_GIT_SETTINGS, "ls-files", "-z", "--stage", "--", *GENERATED_ROOTS],
        cwd=root, env=env, capture_output=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ToolError(
            Problem(
                f"git cannot list the files it tracks under the generated folders: {said[0] if said else 'no message'}",
                remedy="run codegen in a git checkout that `git status` accepts (or outside any checkout)",
            )
        )
    entries = {}
    for entry in done.stdout.decode("utf-8", "surrogateescape").split("\0"):
        meta, tab, path = entry.partition("\t")  # "<mode> <object> <stage>\t<path>"
        if tab:
            entries[path] = meta.partition(" ")[0]
    return entries


def generated_entries(root: Path) -> tuple[set[str], list[Drift]]:
    """The regular files in the generated folders, and a drift for each index entry that is not one.

    A submodule (gitlink, mode 160000) checked out without its submodules is an
    empty folder, and a symlink (120000) may be checked out as a plain file: the
    working tree alone would not show them, so git's index is asked.
    """
    index = index_entries(root)
    present = {p for folder in GENERATED_ROOTS for p in tree_files(root, folder, index)}
    odd = [
        Drift(path, "symlink" if mode == "120000" else "unexpected", None, None)
        for path, mode in sorted((index or {}).items())
        if mode not in _REGULAR_MODES
    ]
    return present, odd


@dataclass(frozen=True)
class Drift:
    path: str
    # "hand-edited spec", "changed", "missing", "stale", "unexpected", "symlink", "leftover", "interrupted write"
    kind: str
    expected: bytes | None  # what the pipeline produces
    actual: bytes | None  # what the tree holds (never read through a symlink)


def symlink_drifts(root: Path) -> list[Drift]:
    return [Drift(link, "symlink", None, None) for link in find_symlinks(root)]


def compare_tree(root: Path, staged: Staged) -> list[Drift]:
    """Every generated path where the tree differs from the staged output (the synced spec files excluded)."""
    links = find_symlinks(root)
    drifts = [Drift(link, "symlink", None, None) for link in links]
    synced = {SPEC, *staged.synced}
    expected = {p: d for p, d in staged.files().items() if p not in synced and not _under(p, links)}
    previous = None if _under(MANIFEST, links) else read_or_none(root / MANIFEST)
    recorded = read_manifest_paths(previous) if previous is not None else set()
    for path, data in sorted(expected.items()):
        actual = read_or_none(root / path)
        if actual is None:
            drifts.append(Drift(path, "missing", data, None))
        elif actual != data:
            drifts.append(Drift(path, "changed", data, actual))
    present, odd = generated_entries(root)
    drifts += [d for d in odd if not (d.kind == "symlink" and _under(d.path, links))]
    odd_paths = {d.path for d in odd}
    recorded_present = {p for p in recorded if not _under(p, links) and _is_regular(root, p)}
    for path in sorted((present | recorded_present) - expected.keys()):
        if _under(path, links) or path in odd_paths:
            continue
        kind = "stale" if path in recorded else "unexpected"
        drifts.append(Drift(path, kind, None, read_or_none(root / path)))
    return drifts


def synced_drifts(root: Path, synced: Mapping[str, bytes]) -> list[Drift]:
    """Each envd file the tree holds otherwise than the pin (`hand-edited spec`), and any other file in ENVD_DIR.

    The folder holds exactly the synced files: one more is someone's work, never removed by a write
    (`refuse_unexpected`), and `unexpected` in the check.  Symlinks are `find_symlinks`' to report.
    """
    if not synced:
        return []
    links = find_symlinks(root)
    drifts = [
        Drift(path, "hand-edited spec", data, read_or_none(root / path))
        for path, data in sorted(synced.items())
        if not _under(path, links) and read_or_none(root / path) != data
    ]
    folder = root / ENVD_DIR
    if first_symlink(root, ENVD_DIR) is None and folder.is_dir():
        for dirpath, _, filenames in os.walk(folder):
            for name in filenames:
                rel = Path(dirpath, name).relative_to(root).as_posix()
                if rel not in synced and not _under(rel, links) and not os.path.islink(root / rel):
                    drifts.append(Drift(rel, "unexpected", None, read_or_none(root / rel)))
    return drifts


def _is_regular(root: Path, rel: str) -> bool:
    """A regular file reached without passing a symlink (manifest paths are data from the tree)."""
    parts = rel.split("/")
    if ".." in parts or rel.startswith("/") or first_symlink(root, rel) is not None:
        return False
    return (root / rel).is_file()


def refuse_symlinks(root: Path, also: Iterable[str] = ()) -> None:
    """Codegen writes nothing while a protected path (or one of `also`) is or lies under a symlink."""
    links = sorted({*find_symlinks(root), *filter(None, (first_symlink(root, rel) for rel in also))})
    if links:
        raise ToolError(
            *(
                Problem(
                    "is a symlink; codegen neither reads nor writes through one",
                    where=link,
                    remedy="replace it with the regular file or folder from git, or delete it, then run again",
                )
                for link in links
            )
        )


def refuse_unexpected(drifts: list[Drift]) -> None:
    """A file in a generated folder that the pipeline neither made nor recorded is someone's work.

    So is a submodule, and a symlink git's index holds there (one in the working
    tree was refused before): swapping the folder would not remove them from the index.
    """
    found = [d for d in drifts if d.kind in ("unexpected", "symlink")]
    if found:
        raise ToolError(
            *(
                Problem(
                    "is inside a generated folder but was not generated"
                    if drift.kind == "unexpected" and not drift.path.startswith(ENVD_DIR + "/")
                    else f"is inside {ENVD_DIR}/ but [tool.codegen] envd-files does not name it"
                    if drift.kind == "unexpected"
                    else "is a symlink in git's index inside a generated folder; codegen writes only regular files",
                    where=drift.path,
                    remedy="move hand-written code out of generated folders (or delete the file, "
                    "and `git rm --cached` it when git tracks it), then run codegen again",
                )
                for drift in found
            )
        )


def write_tree(root: Path, staged: Staged, extra: Mapping[str, bytes | None] | None = None) -> list[str]:
    """Replace the generated folders and files, plus `extra` single files (None: removed), in one transaction.

    Returns the paths whose content changed (nothing is written when none did).
    """
    extra = dict(extra or {})
    refuse_symlinks(root, also=extra)
    drifts = compare_tree(root, staged)
    synced = synced_drifts(root, staged.synced)
    refuse_unexpected(drifts + synced)
    changed = [d.path for d in drifts if d.kind in ("changed", "missing", "stale")]
    changed[:0] = [d.path for d in synced if d.kind == "hand-edited spec"]
    if read_or_none(root / SPEC) != staged.spec:
        changed.insert(0, SPEC)
    changed = [p for p, data in extra.items() if read_or_none(root / p) != data] + changed
    if not changed:
        return []
    contents: dict[str, Content | None] = {}
    for folder in GENERATED_ROOTS:
        prefix = folder + "/"
        contents[folder] = {p.removeprefix(prefix): d for p, d in staged.generated.items() if p.startswith(prefix)}
    contents.update({SPEC: staged.spec, LOCK: staged.lock, MANIFEST: staged.manifest, **extra})
    if staged.envd_lock is not None:  # the synced envd files swap in as one folder, with their lock
        contents[ENVD_DIR] = {p.removeprefix(ENVD_DIR + "/"): d for p, d in staged.synced.items()}
        contents[ENVD_LOCK] = staged.envd_lock
    swap_into_place(root, contents)
    return changed


def leftover_drifts(root: Path) -> list[Drift]:
    """What an interrupted write left behind: never part of a clean tree."""
    return [Drift(path, "leftover", None, None) for path in leftovers(root, leftover_folders(root), is_write_target)]
