"""`api-check [--base REF]`: the Python API of each changed package against the base revision.

A break (python_api.compare) in a package whose change adds no `breaking`
fragment fails, naming each break and the fragment to add.  changelog-check
runs the same verdict, so a pull request cannot ship a break as a fix; a
`Changelog: skip` trailer does not skip it (a break is never invisible).
`release` compares each package with its last release tag and refuses a plan
whose level is below major when the API breaks.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from python_api.compare import ApiDiff, base_tree, diff_package, render
from release.base import changed_paths, merge_base
from release.errors import EXIT_MISSING_FRAGMENT, Problem, ReleaseError
from release.fragments import parse_name
from release.packages import Package, load_packages
from release.plan import ReleasePlan
from release.runtime_api import with_runtime_breaks
from toolkit.changelog import LEVEL_RANK
from toolkit.errors import EXIT_OK
from toolkit.printable import Say


@dataclass(frozen=True)
class Verdict:
    package: Package
    diff: ApiDiff
    breaking_fragment: bool  # the change adds a `breaking` fragment to the package

    @property
    def uncovered(self) -> bool:
        return bool(self.diff.breaks) and not self.breaking_fragment


def adds_breaking_fragment(package: Package, changed: dict[str, str]) -> bool:
    prefix = package.fragment_dir + "/"
    for path, status in changed.items():
        if path.startswith(prefix) and status != "D":
            parsed = parse_name(path.rsplit("/", 1)[1])
            if parsed is not None and parsed[1].name == "breaking":
                return True
    return False


def api_diff(package: Package, old_dir: Path, new_dir: Path) -> ApiDiff:
    """griffe's view of the change, and what only importing both sides shows (release.runtime_api)."""
    return with_runtime_breaks(diff_package(package, old_dir, new_dir), package, old_dir, new_dir)


def api_verdicts(root: Path, base_commit: str, packages: list[Package], changed: dict[str, str]) -> list[Verdict]:
    """One verdict per package with a changed file: its API at `base_commit` against the working tree."""
    touched = [p for p in packages if any(path.startswith(p.path + "/") for path in changed)]
    if not touched:
        return []
    # Every package of the base: a touched one is imported beside the in-repo packages it requires.
    with base_tree(root, base_commit, packages) as old:
        return [
            Verdict(p, api_diff(p, old / p.path, root / p.path), adds_breaking_fragment(p, changed)) for p in touched
        ]


def show_verdicts(verdicts: list[Verdict], base: str, show: Say) -> int:
    """Print what changed; EXIT_MISSING_FRAGMENT when a break has no `breaking` fragment."""
    failed = False
    for v in verdicts:
        if v.uncovered:
            failed = True
            show(
                f"error: {v.package.name}: the Python API breaks against {base}, "
                f"but {v.package.fragment_dir}/ has no new `breaking` fragment:"
            )
            show("\n".join(f"  {b}" for b in v.diff.breaks))
            show(
                f"  -> add `{v.package.fragment_dir}/<PR number>.breaking.md` (or `+<name>.breaking.md`) "
                "telling users what to change; the release then moves the major version"
            )
        elif v.diff.breaks or v.diff.added:
            verdict = "breaking, with a `breaking` fragment" if v.diff.breaks else "additions only"
            show(f"python api: {v.package.name} against {base}: {verdict}")
            show("\n".join(f"  {line}" for line in render(v.diff)))
    return EXIT_MISSING_FRAGMENT if failed else EXIT_OK


def run_api_check(root: Path, base: str | None, say: Say, show: Say) -> int:
    packages = load_packages(root)
    base_commit = merge_base(root, base)
    shown = f"{base or 'main'} (merge base {base_commit[:12]})"
    say(f"compare the Python API with {shown} and the working tree")
    verdicts = api_verdicts(root, base_commit, packages, changed_paths(root, base_commit))
    code = show_verdicts(verdicts, shown, show)
    if code == EXIT_OK:
        show(f"api-check: {len(verdicts)} changed package(s); no Python API break without a `breaking` fragment")
    return code


def last_release_commit(root: Path, package: Package) -> tuple[str, str] | None:
    """(tag, commit) of the package's current version's tag, `<name>-v<version>`, when the repository has it."""
    tag = f"{package.tag_prefix}{package.version}"
    found = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", "--end-of-options", f"refs/tags/{tag}^{{commit}}"],
        cwd=root, capture_output=True, text=True, check=False,
    )  # fmt: skip
    return (tag, found.stdout.strip()) if found.returncode == 0 else None


def check_release_levels(root: Path, plan: ReleasePlan, say: Say) -> None:
    """Refuse a plan that releases a Python API break as less than a major release (against the last tag)."""
    problems: list[Problem] = []
    packages = load_packages(root)
    for release in plan.releases:
        package = release.package
        last = last_release_commit(root, package)
        if last is None:
            say(f"{package.name}: no tag {package.tag_prefix}{package.version}: its Python API is not compared")
            continue
        tag, commit = last
        with base_tree(root, commit, packages) as old:
            diff = api_diff(package, old / package.path, root / package.path)
        say(f"{package.name}: Python API against {tag}: {diff.level}")
        if diff.breaks and LEVEL_RANK[release.level] < LEVEL_RANK["major"]:
            shown = "\n    ".join(diff.breaks)
            problems.append(
                Problem(
                    f"{package.name}: the plan is a {release.level} release ({release.new_version}) but the "
                    f"Python API breaks against {tag}:\n    {shown}",
                    remedy=f"add `{package.fragment_dir}/+<name>.breaking.md` telling users what to change, "
                    "then release again; nothing was written",
                )
            )
    if problems:
        raise ReleaseError(*problems)
