"""Which lock the offline fallback may trust: the one at the base revision, not the one under review.

The lock lives in the same tree as the spec, so a pull request can edit both.
When the upstream cannot be reached, the check therefore compares the pin, the
lock and the spec with the base revision (`--base REF`, in CI the pull
request's base; locally the merge base with the default branch): unchanged,
the lock is the base's and the tracked spec may stand in; touched, the change
moves or edits the pin and only the upstream can vouch for the spec.
"""

from __future__ import annotations

from dataclasses import dataclass

import git

from codegen.config import LOCK, RUNTIME_REF, SPEC, Project
from codegen.errors import CodegenError, Problem
from codegen.lock import git_blob_id

PIN_FILES = (RUNTIME_REF, LOCK, SPEC)
# Where the default branch may be found, most specific first.
_DEFAULT_BRANCHES = ("refs/remotes/origin/HEAD", "refs/remotes/origin/main", "refs/heads/main", "refs/heads/master")
_REGULAR_FILE = "100644"


@dataclass(frozen=True)
class Base:
    commit: str
    described: str  # how it was found, for the output
    touched: tuple[str, ...]  # pin files that differ from it (or are missing there)

    @property
    def short(self) -> str:
        return self.commit[:7]


def find_base(project: Project, ref: str | None) -> Base | None:
    """The base revision: `ref`, else the merge base with the default branch; None when there is none.

    An explicit `ref` that cannot be resolved is an error, never silently ignored.
    """
    if ref is not None and (not ref or ref.startswith("-") or not ref.isprintable()):
        raise CodegenError(Problem(f"--base {ref!r} is not a revision", remedy="pass a branch, tag or commit id"))
    try:
        repo = git.Repo(project.root)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        if ref is not None:
            raise CodegenError(
                Problem(f"--base {ref}: {project.root} is not a git checkout", remedy="run in the repository")
            ) from None
        return None
    g = repo.git
    if ref is not None:
        commit = _rev_parse(g, ref)
        if commit is None:
            raise CodegenError(
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
    return Base(commit=commit, described=described, touched=_touched(project, g, commit))


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


def _touched(project: Project, g: git.Git, commit: str) -> tuple[str, ...]:
    """Pin files whose working-tree bytes are not the base's regular file."""
    listed = str(g.ls_tree("-z", "--full-tree", "--end-of-options", commit, "--", *PIN_FILES))
    at_base: dict[str, tuple[str, str]] = {}
    for entry in filter(None, listed.split("\0")):
        meta, path = entry.split("\t", 1)
        mode, _, blob = meta.split(" ")
        at_base[path] = (mode, blob)
    touched = []
    for path in PIN_FILES:
        target = project.root / path
        mode, blob = at_base.get(path, ("", ""))
        if mode != _REGULAR_FILE or target.is_symlink() or not target.is_file():
            touched.append(path)
        elif git_blob_id(target.read_bytes()) != blob:
            touched.append(path)
    return tuple(touched)
