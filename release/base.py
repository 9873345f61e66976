"""The base a branch is checked against, and what changed since: for the changelog and the Python API checks.

The base is the merge base of REF (default `main`, else `origin/main`) with HEAD.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from release.errors import Problem, ReleaseError

DEFAULT_BASES = ("main", "origin/main")


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ReleaseError(
            Problem(
                f"git {' '.join(args)} failed: {done.stderr.strip()}",
                remedy="run in a git checkout with the base revision fetched (CI: fetch-depth: 0)",
            )
        )
    return done.stdout


def merge_base(root: Path, base: str | None) -> str:
    candidates = [base] if base else list(DEFAULT_BASES)
    for ref in candidates:
        if ref.startswith("-"):
            raise ReleaseError(Problem(f"--base {ref!r} starts with '-'", remedy="name a branch or a commit"))
        found = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"],
            cwd=root, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if found.returncode == 0:
            return git(root, "merge-base", found.stdout.strip(), "HEAD").strip()
    raise ReleaseError(
        Problem(
            f"cannot find {' or '.join(candidates)} to compare with",
            remedy="pass --base <branch or commit> (in CI: the pull request's base revision)",
        )
    )


def changed_paths(root: Path, base_commit: str) -> dict[str, str]:
    """path -> git status letter (A, M, D, T), base to working tree, untracked files as A."""
    out = git(root, "diff", "--name-status", "-z", "--no-renames", base_commit, "--")
    fields = [f for f in out.split("\0") if f]
    changed = dict(zip(fields[1::2], (s[0] for s in fields[0::2]), strict=True))
    for path in git(root, "ls-files", "-z", "--others", "--exclude-standard").split("\0"):
        if path:
            changed[path] = "A"
    return changed
