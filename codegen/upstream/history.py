"""Rebuild, offline, the upstream "runtime" repository that owns the API spec.

How it works, and why: docs/maintainers/design.md, "codegen/upstream/history.py".
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import tomllib
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from git import Actor, Repo

from codegen.tree.write import first_symlink
from toolkit.errors import Problem, ToolError
from toolkit.read import read_or_none

HISTORY_DIR = Path(__file__).resolve().parents[2] / "spec" / "upstream-history"
PLAN = "history.toml"
STEPS = ("write", "apply")
_FIELDS = {"step", "source", "files", "message", "author_name", "author_email", "date", "tag"}
# A "write" step that writes several files names each as {path, source}; one that writes the spec alone
# names only its source (spec_path is where it goes).
_FILE_FIELDS = {"path", "source"}
# Enough for the spec files of one pin (the control plane and the envd files), few enough to review.
_MAX_FILES = 16
# Names git accepts and no shell, option parser or path can misread.
_REF_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)*")
_FILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_PATH_PART = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")
_REMEDY = "fix spec/upstream-history/ (history.toml says how it works), then rebuild"

# Keep the user's and the system's git configuration (hooks, template dir,
# autocrlf, signing, default branch) out of the git commands we run.
_GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
}
# Repository-level settings win over any configuration that still gets read,
# including by GitPython's own (pure Python) index and commit code.
_REPO_CONFIG = {
    ("core", "autocrlf"): "false",
    ("core", "hooksPath"): os.devnull,
    ("commit", "gpgSign"): "false",
    ("i18n", "commitEncoding"): "UTF-8",
}


@dataclass(frozen=True)
class Commit:
    step: str
    source: bytes  # the file's bytes, LF line ends (a "write" of several files: the first one's)
    source_name: str
    message: str
    person: Actor
    date: datetime
    tag: str | None
    # A "write" step's files: (path in the repository, source name, bytes); an "apply" step has none.
    writes: tuple[tuple[str, str, bytes], ...] = ()


@dataclass(frozen=True)
class HistoryPlan:
    branch: str
    spec_path: str
    commits: tuple[Commit, ...]


def _refuse(message: str, where: str = f"spec/upstream-history/{PLAN}") -> ToolError:
    return ToolError(Problem(f"{message}; {_REMEDY}", where=where))  # one line: it says what to do


def load_history_plan(history: Path) -> HistoryPlan:
    """history.toml, every entry checked; each source read from the history folder itself."""
    data = _read(history, PLAN)
    if data is None:
        raise _refuse(f"{PLAN} is missing, or is (or lies in) a symlink", where=str(history))
    try:
        raw: dict[str, Any] = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise _refuse(f"not valid TOML: {error}") from None
    branch, spec_path, commits = raw.get("branch"), raw.get("spec_path"), raw.get("commits")
    if not isinstance(branch, str) or not _REF_NAME.fullmatch(branch):
        raise _refuse(f"branch must be a plain branch name, not {branch!r}")
    if not isinstance(spec_path, str) or not _relative_path(spec_path):
        raise _refuse(f"spec_path must be a relative path inside the repository (no '..', no .git), not {spec_path!r}")
    if not isinstance(commits, list) or not commits:
        raise _refuse("needs at least one [[commits]] entry")
    return HistoryPlan(
        branch, spec_path, tuple(_commit(history, n, entry, spec_path) for n, entry in enumerate(commits, 1))
    )


def _read(history: Path, name: str) -> bytes | None:
    """A regular file directly in `history`; None when it, the folder or the one above is a symlink.

    From the repository root down (`spec/`, `spec/upstream-history/`, the file):
    a committed `spec` symlink must not lead the build out of the repository.
    """
    top = history.parent.parent
    if first_symlink(top, f"{history.parent.name}/{history.name}/{name}") is not None:
        return None
    return read_or_none(history / name)


def _relative_path(path: str) -> bool:
    parts = path.split("/")
    return all(_PATH_PART.fullmatch(part) for part in parts) and ".git" not in {p.lower() for p in parts}


def _commit(history: Path, number: int, entry: Any, spec_path: str) -> Commit:
    where = f"spec/upstream-history/{PLAN} (commit {number})"
    if not isinstance(entry, dict):
        raise _refuse("must be a table", where)
    unknown = sorted(set(entry) - _FIELDS)
    if unknown:
        raise _refuse(f"unknown key(s) {', '.join(map(repr, unknown))}; known: {', '.join(sorted(_FIELDS))}", where)
    many = "files" in entry
    keys = ("step", "message", "author_name", "author_email", "date") + (() if many else ("source",))
    text = {key: entry.get(key) for key in keys}
    for key, value in text.items():
        if not isinstance(value, str) or not value.strip():
            raise _refuse(f"{key} must be a non-empty string, not {value!r}", where)
    step = str(text["step"])
    if step not in STEPS:
        raise _refuse(f"unknown step {step!r} (expected 'write' or 'apply')", where)
    if many and (step != "write" or "source" in entry):
        raise _refuse("files goes with step 'write' and no source (each file names its own)", where)
    listed = _files(entry["files"], where) if many else ((spec_path, str(text["source"])),)
    writes = tuple((path, name, _source(history, name, where)) for path, name in listed)
    _, name, source = writes[0]
    try:
        date = datetime.fromisoformat(str(text["date"]))
    except ValueError:
        date = None
    if date is None or date.tzinfo is None:
        raise _refuse(f"date must be an ISO 8601 date and time with its offset, not {text['date']!r}", where)
    tag = entry.get("tag")
    if tag is not None and (not isinstance(tag, str) or not _REF_NAME.fullmatch(tag)):
        raise _refuse(f"tag must be a plain tag name, not {tag!r}", where)
    return Commit(
        step=step,
        source=source,
        source_name=name,
        message=str(text["message"]).strip() + "\n",
        person=Actor(str(text["author_name"]), str(text["author_email"])),
        date=date,
        tag=tag,
        writes=writes if step == "write" else (),
    )


def _files(files: Any, where: str) -> tuple[tuple[str, str], ...]:
    """A write step's `files`: each a {path, source} table, paths relative and plain, none twice."""
    if not isinstance(files, list) or not 0 < len(files) <= _MAX_FILES:
        raise _refuse(f"files must be a list of 1 to {_MAX_FILES} {{path, source}} tables", where)
    listed: list[tuple[str, str]] = []
    for file in files:
        if not isinstance(file, dict) or set(file) != _FILE_FIELDS:
            raise _refuse(f"each of files must be a table with exactly path and source, not {file!r}", where)
        path, name = file["path"], file["source"]
        if not isinstance(path, str) or not _relative_path(path):
            raise _refuse(
                f"a file's path must be a relative path of plain names (no '..', no .git), not {path!r}", where
            )
        if not isinstance(name, str):
            raise _refuse(f"a file's source must be a file name, not {name!r}", where)
        # A folder and a file of the same name, or one path twice: the order of the writes would decide.
        if any(path == p or p.startswith(path + "/") or path.startswith(p + "/") for p, _ in listed):
            raise _refuse(f"files names {path!r} twice, or as a folder and a file", where)
        listed.append((path, name))
    return tuple(listed)


def _source(history: Path, name: str, where: str) -> bytes:
    """A source's bytes with LF line ends, however it was checked out; only a plain file of the folder."""
    if not _FILE_NAME.fullmatch(name) or name == PLAN:
        raise _refuse(f"source must name a file directly inside spec/upstream-history/, not {name!r}", where)
    source = _read(history, name)  # never through a symlink
    if source is None:
        raise _refuse(f"source {name!r} is not a regular file in spec/upstream-history/", where)
    return source.replace(b"\r\n", b"\n")


def build_runtime_repo(dest: Path, history: Path = HISTORY_DIR) -> list[tuple[str, str]]:
    """Create the runtime repository at `dest`; return (subject, commit id) per commit, in order.

    `dest` must not exist or be an empty directory.  It is built in a scratch
    sibling and renamed into place: on any failure, `dest` is as it was.
    """
    if dest.is_symlink() or (dest.exists() and (not dest.is_dir() or any(dest.iterdir()))):
        raise ToolError(
            Problem(f"{dest} exists and is not an empty directory; refusing to build the runtime repository there")
        )
    plan = load_history_plan(history)
    dest.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}.building-"))
    try:
        built = _build(scratch, plan)
        if dest.exists():
            dest.rmdir()  # empty, checked above
        os.rename(scratch, dest)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return built


def _build(work: Path, plan: HistoryPlan) -> list[tuple[str, str]]:
    repo = Repo.init(work, initial_branch=plan.branch, env=_GIT_ENV)
    repo.git.update_environment(**_GIT_ENV)
    with repo.config_writer() as config:
        for (section, option), value in _REPO_CONFIG.items():
            config.set_value(section, option, value)

    built: list[tuple[str, str]] = []
    for number, step in enumerate(plan.commits, 1):
        where = f"spec/upstream-history/{PLAN} (commit {number})"
        if step.step == "write":
            for path, _, data in step.writes:
                _write_inside(work, path, data, where)
        else:
            patch = Path(repo.git_dir) / "history.patch"  # outside the work tree, never committed
            patch.write_bytes(step.source)
            try:
                # git apply itself refuses paths outside the work tree and beyond a symlink.
                status, _, stderr = repo.git.apply("--", str(patch), with_extended_output=True, with_exceptions=False)
                if status != 0:
                    said = str(stderr).strip().splitlines()
                    raise _refuse(
                        f"{step.source_name} does not apply: {said[0] if said else 'git apply failed'}", where
                    )
            finally:
                patch.unlink()
        repo.git.add("--all")
        _refuse_links(repo, where)
        commit = repo.index.commit(
            step.message,
            author=step.person,
            committer=step.person,
            author_date=step.date,
            commit_date=step.date,
            skip_hooks=True,
        )
        if step.tag is not None:
            repo.create_tag(step.tag, ref=commit)
        built.append((step.message.splitlines()[0], commit.hexsha))
    return built


def _write_inside(work: Path, rel: str, data: bytes, where: str) -> None:
    """Write work/rel, refusing any symlink on the way (a patch may have made one)."""
    current = work
    for part in rel.split("/")[:-1]:
        current = current / part
        if current.is_symlink() or (current.exists() and not current.is_dir()):
            raise _refuse(f"{rel} passes through {current.relative_to(work)}, which is not a folder", where)
        current.mkdir(exist_ok=True)
    target = work / rel
    if target.is_symlink() or (target.exists() and not target.is_file()):
        raise _refuse(f"{rel} is not a regular file in the rebuilt repository", where)
    target.write_bytes(data)


def _refuse_links(repo: Repo, where: str) -> None:
    """The rebuilt repository holds regular files only: no symlink or submodule for a later step to follow."""
    for entry in filter(None, str(repo.git.ls_files("-s", "-z")).split("\0")):
        meta, _, path = entry.partition("\t")
        mode = meta.partition(" ")[0]
        if mode not in ("100644", "100755"):
            raise _refuse(f"the history makes {path} a mode {mode} entry; only files", where)
