"""A scratch copy of the packages with the release applied: versions, bounds, changelogs, fragments gone.

towncrier renders each changelog there (it writes in place and would `git rm`
the fragments, so it only ever runs on the copy, with `--keep`); the
wheels are built from the copy too.  What differs from the tree afterwards
is what the release writes.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from release.errors import Problem, ReleaseError
from release.packages import move_bound, write_version
from release.plan import ReleasePlan
from toolkit.paths import PACKAGES_DIR

CHANGELOG_HEAD = (
    "# Changelog\n\n"
    "Built by `nox -s release` from the fragments in `changelog.d/`; "
    'see docs/maintainers/releasing.md, "Changelog fragments".\n\n'
    "<!-- towncrier release notes start -->\n"
)


@dataclass(frozen=True)
class StagedRelease:
    root: Path  # the scratch copy
    files: dict[str, bytes]  # path -> new content, for the tree
    remove: list[str]  # fragment paths the release consumes


def tracked_files(root: Path, under: str) -> list[str]:
    """Files git would commit under `under` (tracked, or untracked and not ignored)."""
    done = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", under],
        cwd=root,
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        raise ReleaseError(Problem(f"{root} is not a git checkout: {done.stderr.decode(errors='replace').strip()}"))
    return sorted({p for p in done.stdout.decode().split("\0") if p})


def copy_packages(root: Path, scratch: Path) -> None:
    for rel in tracked_files(root, PACKAGES_DIR):
        source = root / rel
        if source.is_symlink() or not source.is_file():
            continue  # deleted but not yet committed, or a link: neither is built
        (scratch / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, scratch / rel)


def stage_release(root: Path, plan: ReleasePlan, scratch: Path, date: str) -> StagedRelease:
    copy_packages(root, scratch)
    files: dict[str, str] = {}
    for release in plan.releases:
        package = release.package
        for rel in package.version_files:
            files[rel] = write_version(root, rel, package.version, release.new_version)
        for move in release.moves:
            files[package.pyproject] = move_bound(
                files[package.pyproject], move.bound, move.new_text, package.pyproject
            )
        for rel, text in release.generated.items():
            files[rel] = text
        if not (root / package.changelog).exists():
            files[package.changelog] = CHANGELOG_HEAD
    for rel, text in files.items():
        (scratch / rel).parent.mkdir(parents=True, exist_ok=True)
        (scratch / rel).write_text(text, encoding="utf-8")
    remove: list[str] = []
    for release in plan.releases:
        folder = scratch / release.package.path
        done = subprocess.run(
            [
                sys.executable, "-m", "towncrier", "build", "--keep",
                "--version", str(release.new_version), "--date", date,
                "--dir", str(folder), "--config", str(folder / "pyproject.toml"),
            ],
            cwd=folder, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise ReleaseError(
                Problem(
                    f"towncrier could not build {release.package.changelog}: {(done.stdout + done.stderr).strip()}",
                    remedy="fix the fragments or [tool.towncrier]; nothing was written",
                )
            )
        files[release.package.changelog] = (folder / "CHANGELOG.md").read_text(encoding="utf-8")
        consumed = [f.path for f in release.fragments] + list(release.generated)
        for rel in consumed:
            (scratch / rel).unlink()
        remove += [f.path for f in release.fragments]
        for rel in release.generated:  # written for towncrier, consumed at once: never left in the tree
            files.pop(rel)
    return StagedRelease(scratch, {rel: text.encode() for rel, text in files.items()}, remove)
