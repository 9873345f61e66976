"""What the check may trust: the base revision's upstream and lock, never the ones under review.

How it works, and why: docs/maintainers/design.md, "codegen/upstream/base_revision.py".
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import git

from codegen.config import Settings, load_settings, read_settings
from codegen.upstream.spec_lock import git_blob_id
from toolkit.errors import Problem, ToolError
from toolkit.paths import ENVD_LOCK, LOCK, PYPROJECT, RUNTIME_REF, SPEC, Project

PIN_FILES = (RUNTIME_REF, LOCK, SPEC, ENVD_LOCK)
SETTINGS = f"{PYPROJECT} [tool.codegen]"  # how `touched` names a change to the settings
# Where the default branch may be found, most specific first.
_DEFAULT_BRANCHES = ("refs/remotes/origin/HEAD", "refs/remotes/origin/main", "refs/heads/main", "refs/heads/master")
_REGULAR_FILE = "100644"


@dataclass(frozen=True)
class Base:
    commit: str
    described: str  # how it was found, for the output
    touched: tuple[str, ...]  # pin files (and SETTINGS) that differ from it (or are missing there)
    settings: Settings  # [tool.codegen] at the base: the upstream the check fetches from

    @property
    def short(self) -> str:
        return self.commit[:7]


def find_base(project: Project, ref: str | None) -> Base | None:
    """The base revision: `ref`, else the merge base with the default branch; None when there is none.

    An explicit `ref` that cannot be resolved is an error, never silently ignored.
    """
    if ref is not None and (not ref or ref.startswith("-") or not ref.isprintable()):
        raise ToolError(Problem(f"--base {ref!r} is not a revision", remedy="pass a branch, tag or commit id"))
    try:
        repo = git.Repo(project.root)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        if ref is not None:
            raise ToolError(
                Problem(f"--base {ref}: {project.root} is not a git checkout", remedy="run in the repository")
            ) from None
        return None
    g = repo.git
    if ref is not None:
        commit = _rev_parse(g, ref)
        if commit is None:
            raise ToolError(
                Problem(
                    f"--base {ref} names no commit in this repository",
                    remedy="fetch the base first (in CI: fetch-depth 0, or fetch the base branch)",
                )
            )
        described = f"--base {ref}"
    else:
        found = _merge_base_with_default_branch(g)
        if found is None:
            return None
        commit, described = found
    settings = _settings_at(project, g, commit)
    touched = _pin_files_not_at_base(project, g, commit)
    changed = settings.differences(load_settings(project))
    if changed:
        touched += (f"{SETTINGS} ({', '.join(changed)})",)
    return Base(commit=commit, described=described, touched=touched, settings=settings)


def _rev_parse(g: git.Git, ref: str) -> str | None:
    try:
        return str(g.rev_parse("--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")).strip() or None
    except git.GitCommandError:
        return None


def _merge_base_with_default_branch(g: git.Git) -> tuple[str, str] | None:
    for name in _DEFAULT_BRANCHES:
        if _rev_parse(g, name) is None:
            continue
        try:
            merge_base = str(g.merge_base("HEAD", name)).strip()
        except git.GitCommandError:
            continue  # unrelated histories, or no HEAD yet
        shown = name.removeprefix("refs/heads/").removeprefix("refs/remotes/")
        return merge_base, f"the merge base with {shown}"
    return None


def _settings_at(project: Project, g: git.Git, commit: str) -> Settings:
    """`[tool.codegen]` as the base has it, from its regular pyproject.toml."""
    where = f"{PYPROJECT} at the base {commit[:7]}"
    mode, blob = _entries(g, commit, PYPROJECT).get(PYPROJECT, ("", ""))
    if mode != _REGULAR_FILE:
        raise ToolError(
            Problem(
                "the base revision has no regular pyproject.toml, so no upstream to trust",
                where=where,
                remedy="pass a --base that has [tool.codegen] (the branch this change merges into)",
            )
        )
    try:
        text = str(g.cat_file("blob", blob, strip_newline_in_stdout=False))
    except (git.GitCommandError, UnicodeDecodeError) as exc:
        raise ToolError(Problem(f"cannot read it: {exc}", where=where)) from None
    return read_settings(text, project, where=where)


def _entries(g: git.Git, commit: str, *paths: str) -> dict[str, tuple[str, str]]:
    """path -> (mode, blob) at `commit`, for those of `paths` it has."""
    listed = str(g.ls_tree("-z", "--full-tree", "--end-of-options", commit, "--", *paths))
    at_base: dict[str, tuple[str, str]] = {}
    for entry in filter(None, listed.split("\0")):
        meta, path = entry.split("\t", 1)
        mode, _, blob = meta.split(" ")
        at_base[path] = (mode, blob)
    return at_base


def _pin_files_not_at_base(project: Project, g: git.Git, commit: str) -> tuple[str, ...]:
    """Pin files whose working-tree bytes are not the base's regular file."""
    at_base = _entries(g, commit, *PIN_FILES)
    touched = []
    for path in PIN_FILES:
        target = project.root / path
        mode, blob = at_base.get(path, ("", ""))
        if path == ENVD_LOCK and not mode and not os.path.lexists(target):
            continue  # no envd files on either side: nothing of the data plane's pin is touched
        if mode != _REGULAR_FILE or target.is_symlink() or not target.is_file():
            touched.append(path)
        elif git_blob_id(target.read_bytes()) != blob:
            touched.append(path)
    return tuple(touched)
