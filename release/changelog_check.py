"""`changelog-check [--base REF]`: a change to a package's hand-written files needs a fragment.

How it works, and why: docs/maintainers/design.md, "release/changelog_check.py".
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from release.api_check import api_verdicts, show_verdicts
from release.base import changed_paths, git, merge_base
from release.errors import EXIT_MISSING_FRAGMENT
from release.fragments import HOW_TO_ADD, parse_name, read_fragments
from release.packages import Package, load_packages
from toolkit.paths import CHANGELOG, GENERATED_ROOTS, MANIFEST, read_manifest_paths
from toolkit.printable import Say
from toolkit.read import read_or_none

SKIP_TRAILER = "Changelog: skip"
_SHOWN = 5


def skipped(root: Path, base_commit: str) -> bool:
    trailers = git(root, "log", "--format=%(trailers:key=Changelog,valueonly)", f"{base_commit}..HEAD")
    return any(line.strip().lower() == "skip" for line in trailers.splitlines())


def generated_paths(root: Path, base_commit: str) -> frozenset[str]:
    """The files in generated folders that the manifest lists, at the base or in the working tree.

    Both, so that a bump's new files and the ones it removes are generated
    alike; the generated-files check vouches that the tree's manifest is the
    one the pin produces.
    """
    at_base = subprocess.run(
        ["git", "cat-file", "blob", f"{base_commit}:{MANIFEST}"], cwd=root, capture_output=True, check=False
    )
    listed = read_manifest_paths(at_base.stdout) if at_base.returncode == 0 else set()
    listed |= read_manifest_paths(read_or_none(root / MANIFEST) or b"")
    folders = tuple(f"{folder.rstrip('/')}/" for folder in GENERATED_ROOTS)
    return frozenset(p for p in listed if p.startswith(folders))


def missing_fragments(
    packages: list[Package], changed: dict[str, str], generated: frozenset[str]
) -> dict[str, list[str]]:
    """Package name -> its hand-written changed paths, for the packages whose change has no fragment."""
    missing: dict[str, list[str]] = {}
    for package in packages:
        prefix = package.path + "/"
        own = [p for p in sorted(changed) if p.startswith(prefix)]
        fragments = [
            p for p in own
            if p.startswith(package.fragment_dir + "/") and changed[p] != "D" and parse_name(p.rsplit("/", 1)[1])
        ]  # fmt: skip
        changelog = f"{package.path}/{CHANGELOG}"
        hand = [
            p for p in own if p not in generated and p != changelog and not p.startswith(package.fragment_dir + "/")
        ]
        if hand and not fragments:
            missing[package.name] = hand
    return missing


def run_changelog_check(root: Path, base: str | None, say: Say, show: Say) -> int:
    packages = load_packages(root)
    for package in packages:
        read_fragments(root, package.path)  # a bad fragment fails here, before the release does
    base_commit = merge_base(root, base)
    shown = f"{base or 'main'} (merge base {base_commit[:12]})"
    say(f"compare with {shown} and the working tree")
    changed = changed_paths(root, base_commit)
    # The Python API first: a break is never a change users cannot see, so no trailer skips it.
    api_code = show_verdicts(api_verdicts(root, base_commit, packages, changed), shown, show)
    if skipped(root, base_commit):
        show(f"changelog-check: fragments not required: skipped by a `{SKIP_TRAILER}` commit trailer")
        return api_code
    missing = missing_fragments(packages, changed, generated_paths(root, base_commit))
    if not missing:
        show("changelog-check: every changed package has a fragment")
        return api_code
    for name, paths in missing.items():
        package = next(p for p in packages if p.name == name)
        shown = ", ".join(paths[:_SHOWN]) + (f" and {len(paths) - _SHOWN} more" if len(paths) > _SHOWN else "")
        show(f"error: {name} changed ({shown}) but {package.fragment_dir}/ has no new fragment")
    show(f"  -> {HOW_TO_ADD}")
    show(f"  -> or, for a change users cannot see, end a commit message with the trailer `{SKIP_TRAILER}`")
    return EXIT_MISSING_FRAGMENT
