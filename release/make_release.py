"""`release [PACKAGE...] [--dry-run]`: plan, check, stage, build, smoke-test, then write once.

Order matters: everything that can refuse (bad fragments, a bound that cannot
be moved, a Python API break released below major, drifted generated files, a failed build or smoke test) runs before
the single write, so a refusal leaves the tree exactly as it was.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from release.api_check import check_release_levels
from release.errors import Problem, ReleaseError
from release.fragments import HOW_TO_ADD, Fragment, read_fragments
from release.packages import load_packages
from release.plan import ReleasePlan, make_plan
from release.stage import stage_release
from release.tree import write_all
from release.wheels import BUILD_LOCK, build_all, smoke_test
from toolkit.errors import EXIT_CANNOT_RUN, EXIT_OK
from toolkit.paths import RUNTIME_REF
from toolkit.printable import Say
from toolkit.read import read_or_none
from toolkit.runtime_record import chain_to, read_records, stray_remedy
from toolkit.signals import Terminated, signals_recorded
from toolkit.transaction import recover_tree

# The checkout whose codegen/ checks the generated files: this one's, run as its own process, so
# that a release imports nothing of codegen's.
CHECKER_HOME = Path(__file__).resolve().parents[1]
CHECKER = (sys.executable, "-X", "utf8", "-m", "codegen")
CHECKER_STOP_TIMEOUT = 120.0  # seconds a stopped check may take to stop its generators; then it is killed
# The line Python starts a run's unhandled exception with (codegen's own lines are prefixed or indented):
# the check failed to run, whatever its status.
_CRASHED = "Traceback (most recent call last):"


def load_release_plan(root: Path, names: Sequence[str]) -> ReleasePlan:
    packages = load_packages(root)
    fragments: dict[str, list[Fragment]] = {}
    problems: list[Problem] = []
    for package in packages:
        try:
            fragments[package.name] = read_fragments(root, package.path)
        except ReleaseError as exc:
            problems.extend(exc.problems)
    problems += unchained_records(root)
    if problems:
        raise ReleaseError(*problems)
    return make_plan(packages, fragments, list(names))


def unchained_records(root: Path) -> list[Problem]:
    """bump's fragments that do not lead to the current pin: a record of a change the tree does not hold."""
    pin = read_or_none(root / RUNTIME_REF)
    records = read_records(root)
    if not records:
        return []
    text = pin.decode(errors="replace").strip() if pin is not None else ""
    stray = chain_to(records, text).stray if text else tuple(records)
    return [Problem("does not chain to the current pin", where=r.path, remedy=stray_remedy(text)) for r in stray]


def check_generated_files(root: Path, say: Say, *, base: str | None = None) -> None:
    """The generated-files check, as a process of its own (as CI runs it); its report is shown only when it fails.

    `base`: the revision it trusts (`--base`); default: the merge base with the default branch.
    """
    trusted = ["--base", base] if base is not None else []
    output, code = _run_checker([*CHECKER, "--root", str(root), "check", *trusted, "--no-cache"])  # no local cache
    if code in (-signal.SIGTERM, 128 + signal.SIGTERM):  # stopped, not drift
        raise Terminated()
    if code in (-signal.SIGINT, 128 + signal.SIGINT):
        raise KeyboardInterrupt()
    said = "\n    ".join(output.strip().splitlines()[-40:])
    if code == EXIT_CANNOT_RUN or (code != 0 and _CRASHED in output.splitlines()):  # e.g. a committed journal
        raise ReleaseError(
            Problem(
                f"the generated-files check could not run (`python -m codegen check` exit {code}):\n    {said}",
                remedy="fix what the check names above, then release; nothing was written",
            )
        )
    if code != 0:
        raise ReleaseError(
            Problem(
                f"the generated files do not match the pin (`python -m codegen check` exit {code}):\n    {said}",
                remedy="run `nox -s codegen`, commit the result, then release; nothing was written",
            )
        )
    say("generated files: clean")


def _run_checker(command: list[str]) -> tuple[str, int]:
    """The check's output and exit status; stopped itself, with its own clean-up, when the release is.

    In a session of its own, so that a Ctrl-C reaches it once, from here: the signal that stops the
    release is handed on (SIGTERM for SIGTERM, SIGINT otherwise), and the release waits while the
    check stops its generators and removes its scratch folder, as it does when stopped alone.
    """
    checker: subprocess.Popen[str] | None = None
    try:
        # A stop that lands inside Popen, after the fork, would leave the check running unowned (and
        # holding the tree's run lock): while it starts, a signal is noted, and acted on just after.
        with signals_recorded() as received:
            checker = subprocess.Popen(
                command,
                cwd=CHECKER_HOME,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                encoding="utf-8",
                errors="backslashreplace",
                start_new_session=True,
            )
        if received:
            raise Terminated() if received[0] == signal.SIGTERM else KeyboardInterrupt()
        output, _ = checker.communicate()
    except BaseException as stopped:
        if checker is None:
            raise
        checker.send_signal(signal.SIGTERM if isinstance(stopped, Terminated) else signal.SIGINT)
        try:
            checker.communicate(timeout=CHECKER_STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            checker.kill()
            checker.communicate()
        raise
    return output, checker.returncode


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
