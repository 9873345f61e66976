"""`release [PACKAGE...] [--dry-run]`: plan, check, stage, build, smoke-test, then write once.

Order matters: everything that can refuse (bad fragments, a bound that cannot
be moved, a Python API break released below major, drifted generated files, a failed build or smoke test) runs before
the single write, so a refusal leaves the tree exactly as it was.
"""

from __future__ import annotations

import contextlib
import io
import signal
import tempfile
from collections.abc import Sequence
from pathlib import Path

import codegen.cli
from release.api_check import check_release_levels
from release.errors import Problem, ReleaseError
from release.fragments import HOW_TO_ADD, Fragment, read_fragments
from release.packages import load_packages
from release.plan import ReleasePlan, make_plan
from release.stage import stage_release
from release.tree import write_all
from release.wheels import BUILD_LOCK, build_all, smoke_test
from toolkit.errors import EXIT_CANNOT_RUN, EXIT_OK
from toolkit.printable import Say
from toolkit.transaction import recover_tree


def load_release_plan(root: Path, names: Sequence[str]) -> ReleasePlan:
    packages = load_packages(root)
    fragments: dict[str, list[Fragment]] = {}
    problems: list[Problem] = []
    for package in packages:
        try:
            fragments[package.name] = read_fragments(root, package.path)
        except ReleaseError as exc:
            problems.extend(exc.problems)
    if problems:
        raise ReleaseError(*problems)
    return make_plan(packages, fragments, list(names))


def check_generated_files(root: Path, say: Say, *, base: str | None = None) -> None:
    """The generated-files check, in process; its report is shown only when it fails.

    `base`: the revision it trusts (`--base`); default: the merge base with the default branch.
    """
    out = io.StringIO()
    trusted = ["--base", base] if base is not None else []
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):  # a release trusts no local cache
        code = codegen.cli.main(["--root", str(root), "check", *trusted, "--no-cache"])
    if code - 128 in (signal.SIGINT, signal.SIGTERM):  # Ctrl-C or SIGTERM stopped the check: an interrupt, not drift
        raise codegen.cli.Terminated() if code - 128 == signal.SIGTERM else KeyboardInterrupt()
    if code == EXIT_CANNOT_RUN:  # e.g. a committed codegen journal: the check says what to do
        raise ReleaseError(
            Problem(
                "the generated-files check could not run (`python -m codegen check` exit "
                f"{code}):\n    " + "\n    ".join(out.getvalue().strip().splitlines()[-40:]),
                remedy="fix what the check names above, then release; nothing was written",
            )
        )
    if code != 0:
        raise ReleaseError(
            Problem(
                "the generated files do not match the pin (`python -m codegen check` exit "
                f"{code}):\n    " + "\n    ".join(out.getvalue().strip().splitlines()[-40:]),
                remedy="run `nox -s codegen`, commit the result, then release; nothing was written",
            )
        )
    say("generated files: clean")


def run_release(root: Path, names: Sequence[str], *, dry_run: bool, date: str, say: Say, show: Say) -> int:
    if not dry_run:  # an interrupted write (a release's or codegen's) is settled before the tree is read
        recover_tree(root, say)
    plan = load_release_plan(root, names)
    if not plan.releases:
        asked = ", ".join(names) if names else "any package"
        show(f"release: nothing to release: no pending fragments for {asked}; nothing written")
        show(f"release: to release a package, {HOW_TO_ADD}")
        return EXIT_OK
    show(plan.render())
    say("compare the Python API with the last release tags")
    check_release_levels(root, plan, say)
    say("check the generated files")
    check_generated_files(root, say)
    if dry_run:
        show("release: --dry-run: nothing built, nothing written")
        return EXIT_OK
    with tempfile.TemporaryDirectory(prefix="e2b-release-") as tmp:
        scratch = Path(tmp)
        staged = stage_release(root, plan, scratch / "tree", date)
        staged_packages = load_packages(staged.root)
        built = build_all(staged.root, staged_packages, scratch / "dist", say, build_lock=root / BUILD_LOCK)
        smoke_test(root, built, [p.name for p in staged_packages], scratch, say)
        write_all(root, staged.files, staged.remove)
    show(f"release: wrote {len(staged.files)} file(s), removed {len(staged.remove)} fragment(s):")
    for rel in [*staged.files, *staged.remove]:
        show(f"  {rel}")
    tags = " ".join(r.tag for r in plan.releases)
    show(f"release: commit in one pull request; once merged, tag its commit: {tags} (release.yml publishes each tag)")
    return EXIT_OK
