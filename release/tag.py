"""`release-tag <package>-v<version>`: rebuild one package from its tag for publishing.

How it works, and why: docs/maintainers/design.md, "release/tag.py".
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from release.errors import Problem, ReleaseError
from release.make_release import check_generated_files
from release.packages import Package, load_packages
from release.versions import Version
from release.wheels import BUILD_LOCK, build_all, smoke_test
from toolkit.errors import EXIT_OK
from toolkit.printable import Say

_TAG = re.compile(r"(?P<name>[a-z0-9][a-z0-9-]*)-v(?P<version>[0-9][0-9.]*)")
MAIN = "origin/main"  # release.yml checks out with fetch-depth: 0, which fetches every branch


def package_for_tag(packages: list[Package], tag: str) -> Package:
    match = _TAG.fullmatch(tag)
    names = ", ".join(p.tag_prefix + "X.Y.Z" for p in packages)
    if not match:
        raise ReleaseError(Problem(f"tag {tag!r} is not <package>-v<version>", remedy=f"tag as one of {names}"))
    package = next((p for p in packages if p.name == match["name"]), None)
    if package is None:
        raise ReleaseError(Problem(f"tag {tag!r} names no package in packages/", remedy=f"tag as one of {names}"))
    version = Version.parse(match["version"], where=f"tag {tag}")
    if version != package.version:
        raise ReleaseError(
            Problem(
                f"tag {tag!r} says {version}, but {package.pyproject} at this commit says {package.version}",
                remedy=f"tag the commit that `nox -s release` moved to {version} (or delete the tag)",
            )
        )
    return package


def _commit(root: Path, ref: str) -> str | None:
    """The commit `ref` names in the repository at `root`, or None."""
    done = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"],
        cwd=root, capture_output=True, text=True, check=False,
    )  # fmt: skip
    return done.stdout.strip() if done.returncode == 0 else None


def commit_on_main(root: Path, tag: str) -> str:
    """The checked-out commit, which must be the tag's (when the tag is here) and one that origin/main contains."""
    head = _commit(root, "HEAD")
    if head is None:
        raise ReleaseError(Problem(f"{root} is not a git checkout with a commit: nothing to release"))
    tagged = _commit(root, f"refs/tags/{tag}")
    if tagged is not None and tagged != head:
        raise ReleaseError(
            Problem(
                f"tag {tag} is commit {tagged[:12]}, but {head[:12]} is checked out: check out the tag; nothing built"
            )
        )
    main = _commit(root, f"refs/remotes/{MAIN}")
    if main is None:
        raise ReleaseError(
            Problem(f"{MAIN} is not in this clone, so nothing says the commit is main's: fetch it; nothing built")
        )
    contained = subprocess.run(
        ["git", "merge-base", "--is-ancestor", head, main], cwd=root, capture_output=True, text=True, check=False
    )
    if contained.returncode == 1:
        raise ReleaseError(
            Problem(
                f"tag {tag} is on commit {head[:12]}, which {MAIN} does not contain: only main is published "
                "(tag the merged release commit on main); nothing built"
            )
        )
    if contained.returncode != 0:
        raise ReleaseError(Problem(f"git merge-base --is-ancestor failed: {contained.stderr.strip()}; nothing built"))
    return head


def run_release_tag(root: Path, tag: str, out: Path, *, say: Say, show: Say) -> int:
    packages = load_packages(root)
    package = package_for_tag(packages, tag)
    commit = commit_on_main(root, tag)
    if out.exists() and any(out.iterdir()):
        raise ReleaseError(Problem(f"{out} is not empty", remedy="pass an empty or new folder as --out"))
    say(f"{tag}: commit {commit[:12]}, which {MAIN} contains")
    say("check the generated files")
    check_generated_files(root, say, base=commit)
    with tempfile.TemporaryDirectory(prefix="e2b-release-tag-") as tmp:
        scratch = Path(tmp)
        built = build_all(root, packages, scratch / "dist", say, build_lock=root / BUILD_LOCK)
        smoke_test(root, built, [package.name], scratch, say)
        out.mkdir(parents=True, exist_ok=True)
        for path in (built[package.name].wheel, built[package.name].sdist):
            shutil.copy2(path, out / path.name)
    show(f"release-tag: {package.name} {package.version} built, checked and smoke-tested in {out}")
    return EXIT_OK
