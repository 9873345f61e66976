"""`release [PACKAGE...] [--dry-run]` on a scratch copy of this repository with fragments of each type.

One scenario builds and smoke-tests real wheels (slow: three builds, three
venvs); every other one stops before building.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import toolkit.transaction as transaction
from release import make_release
from release.packages import load_packages
from tests.codegen.conftest import run_in_process, tree_digest, unchanged
from tests.release.conftest import CLI, LOCAL_API, SDK, Result, add_fragment

DATE = "2026-12-01"


@pytest.fixture
def pending(project: Path) -> Path:
    """Fragments of every type: e2b breaking + feature, e2b-cli fix + doc, e2b-local-api misc."""
    add_fragment(project, SDK, "10.breaking.md", "`Sandbox.pause()` returns a `SandboxPauseResult`.\n")
    add_fragment(project, SDK, "11.feature.md", "`Sandbox.list()` filters by state.\n")
    add_fragment(project, CLI, "12.fix.md", "`e2b sandbox list` prints an empty table without crashing.\n")
    add_fragment(project, CLI, "+help.doc.md", "Every command's `--help` shows an example.\n")
    add_fragment(project, LOCAL_API, "+tidy.misc.md", "Internal tidying.\n")
    return project


def test_dry_run_plans_and_writes_nothing(pending: Path, run: Callable[..., Result]) -> None:
    with unchanged(pending):
        result = run(pending, "release", "--dry-run")
    assert result.code == 0, result.out + result.err
    assert result.out.splitlines() == [
        "Release plan:",
        "- e2b-cli: 2.0.0 -> 3.0.0 (major; tag e2b-cli-v3.0.0)",
        "    why: fragments: 1 fix, 1 doc",
        "    why: e2b 2.0.0 -> 3.0.0 is outside 'e2b>=2.0.0,<3'",
        "    bound moved: 'e2b>=2.0.0,<3' -> 'e2b>=3.0.0,<4'",
        "    fragment added: packages/cli/changelog.d/+e2b-3.0.0.breaking.md",
        "- e2b-local-api: 0.1.0 -> 0.1.1 (patch, the pre-1.0 rule; tag e2b-local-api-v0.1.1)",
        "    why: fragments: 1 misc",
        "- e2b: 2.0.0 -> 3.0.0 (major; tag e2b-v3.0.0)",
        "    why: fragments: 1 breaking, 1 feature",
        "release: --dry-run: nothing built, nothing written",
    ]
    assert "generated files: clean" in result.err


def test_dry_run_of_one_package(pending: Path, run: Callable[..., Result]) -> None:
    (pending / SDK / "changelog.d/10.breaking.md").unlink()
    with unchanged(pending):
        result = run(pending, "release", "e2b", "--dry-run")
    assert result.code == 0, result.out + result.err
    assert "- e2b: 2.0.0 -> 2.1.0 (minor; tag e2b-v2.1.0)" in result.out
    assert "e2b-cli:" not in result.out
    assert "Not released (not asked for), fragments kept: e2b-cli, e2b-local-api" in result.out


def test_nothing_pending_is_a_clear_no_op(project: Path, run: Callable[..., Result]) -> None:
    with unchanged(project):
        result = run(project, "release")
        named = run(project, "release", "e2b-local-api")
    assert result.code == 0 and named.code == 0
    assert "release: nothing to release: no pending fragments for any package; nothing written" in result.out
    assert "no pending fragments for e2b-local-api; nothing written" in named.out


@pytest.mark.parametrize(
    ("breakage", "message"),
    [
        ("fragment-type", "unknown fragment type 'bugfix'"),
        ("fragment-empty", "packages/cli/changelog.d/20.fix.md: is empty"),
        ("bound", "the bound 'e2b>=2.0' on the in-repo package e2b cannot be moved by a release"),
        ("drift", "the generated files do not match the pin"),
        ("unknown-package", "unknown package(s): e2b-sdk"),
    ],
)
def test_bad_input_is_refused_and_nothing_written(
    pending: Path, run: Callable[..., Result], breakage: str, message: str
) -> None:
    args = ["release"]
    if breakage == "fragment-type":
        add_fragment(pending, CLI, "20.bugfix.md", "Wrong type.\n")
    elif breakage == "fragment-empty":
        add_fragment(pending, CLI, "20.fix.md", "\n")
    elif breakage == "bound":
        pyproject = pending / CLI / "pyproject.toml"
        pyproject.write_text(pyproject.read_text().replace('"e2b>=2.0.0,<3"', '"e2b>=2.0"'))
    elif breakage == "drift":
        generated = pending / SDK / "e2b/api/error_codes.py"
        generated.write_text(generated.read_text() + "# hand edit\n")
    else:
        args.append("e2b-sdk")
    with unchanged(pending):
        result = run(pending, *args)
    assert result.code == 2, result.out + result.err
    assert message in result.err
    assert "Release plan:" not in result.out or breakage == "drift"


def test_bump_fragments_that_do_not_chain_to_the_pin_are_refused_by_name(
    project: Path, run: Callable[..., Result]
) -> None:
    """Issue 40, 14: a record of a change the tree no longer holds would release a version for nothing."""
    pin = (project / "spec/runtime-ref").read_text().strip()
    start, elsewhere = "1" * 12, "2" * 12
    chained = add_fragment(project, SDK, f"+runtime-{start}-{pin[:12]}.feature.md", "The runtime API ...\n")
    stale = add_fragment(project, SDK, f"+runtime-{start}-{elsewhere}.breaking.md", "The runtime API ...\n")
    older = add_fragment(project, SDK, f"+runtime-{elsewhere}.breaking.md", "The runtime API ...\n")
    with unchanged(project):
        result = run(project, "release", "--dry-run")
    assert result.code == 2, result.out + result.err
    for path in (stale, older):
        rel = path.relative_to(project).as_posix()
        assert f"error: {rel}: does not chain to the current pin" in result.err
    assert chained.name not in result.err
    assert "delete them, or set the pin back to the one they end at" in result.err
    assert "Release plan:" not in result.out


def test_a_bad_wheel_writes_nothing(pending: Path, run: Callable[..., Result]) -> None:
    """hatchling builds an empty wheel for a missing package folder; check-wheel-contents refuses it."""
    pyproject = pending / CLI / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('packages = ["e2b_cli"]', 'packages = ["e2b_cli_gone"]'))
    with unchanged(pending):
        result = run(pending, "release", "--date", DATE)
    assert result.code == 2
    assert (
        "check-wheel-contents failed" in result.err
        and "e2b_cli-3.0.0-py3-none-any.whl: W008: Wheel is empty" in result.err
    )
    assert "nothing was written" in result.err


@pytest.mark.slow
def test_release_writes_versions_changelogs_and_bounds_and_the_wheels_pass(
    pending: Path, run: Callable[..., Result], pristine_upstream: Path, tmp_path: Path
) -> None:
    before = tree_digest(pending)
    result = run(pending, "release", "--date", DATE)
    assert result.code == 0, result.out + result.err
    for name in ("e2b", "e2b-cli", "e2b-local-api"):
        assert f"release: smoke test {name} in a fresh venv" in result.err
    assert "tag its commit: e2b-cli-v3.0.0 e2b-local-api-v0.1.1 e2b-v3.0.0" in result.out

    after = tree_digest(pending)
    changed = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
    assert changed == {
        f"{SDK}/pyproject.toml",
        f"{SDK}/e2b/__init__.py",
        f"{SDK}/CHANGELOG.md",
        f"{SDK}/changelog.d/10.breaking.md",
        f"{SDK}/changelog.d/11.feature.md",
        f"{CLI}/pyproject.toml",
        f"{CLI}/e2b_cli/__init__.py",
        f"{CLI}/CHANGELOG.md",
        f"{CLI}/changelog.d/12.fix.md",
        f"{CLI}/changelog.d/+help.doc.md",
        f"{LOCAL_API}/pyproject.toml",
        f"{LOCAL_API}/CHANGELOG.md",
        f"{LOCAL_API}/changelog.d/+tidy.misc.md",
    }
    assert not list(pending.glob("packages/*/changelog.d/*.*.md"))  # consumed; the READMEs stay
    versions = {p.name: str(p.version) for p in load_packages(pending)}  # also checks every __version__
    assert versions == {"e2b": "3.0.0", "e2b-cli": "3.0.0", "e2b-local-api": "0.1.1"}
    cli_pyproject = (pending / CLI / "pyproject.toml").read_text()
    assert '"e2b>=3.0.0,<4",' in cli_pyproject and "e2b>=2.0.0" not in cli_pyproject

    head = "<!-- towncrier release notes start -->\n\n"
    assert (pending / SDK / "CHANGELOG.md").read_text().split(head)[1] == (
        f"## e2b 3.0.0 ({DATE})\n\n"
        "### Breaking changes\n\n- `Sandbox.pause()` returns a `SandboxPauseResult`. (#10)\n\n"
        "### Features\n\n- `Sandbox.list()` filters by state. (#11)\n"
    )
    assert (pending / CLI / "CHANGELOG.md").read_text().split(head)[1] == (
        f"## e2b-cli 3.0.0 ({DATE})\n\n"
        "### Breaking changes\n\n"
        "- Requires `e2b>=3.0.0,<4`: e2b 3.0.0 is a new major release; see its changelog.\n\n"
        "### Fixes\n\n- `e2b sandbox list` prints an empty table without crashing. (#12)\n\n"
        "### Documentation\n\n- Every command's `--help` shows an example.\n"
    )
    assert (
        f"## e2b-local-api 0.1.1 ({DATE})\n\n### Other changes\n\n- Internal tidying.\n"
        in (pending / LOCAL_API / "CHANGELOG.md").read_text()
    )

    # The release left the generated files clean, and a second release has nothing to do.
    check = run_in_process(
        pending, "check", env={"E2B_RUNTIME_REPO": str(pristine_upstream), "E2B_CODEGEN_CACHE": str(tmp_path / "c")}
    )
    assert check.code == 0, check.text
    with unchanged(pending):
        again = run(pending, "release")
    assert again.code == 0 and "nothing to release" in again.out


@pytest.mark.parametrize(
    ("seam", "outcome"),
    [
        ("_write_journal", "old"),  # every swap made, the journal not yet saying "done": rolled back
        ("_finish", "new"),  # the journal says "done", nothing cleaned up yet: finished
    ],
)
def test_a_release_killed_during_its_write_leaves_the_tree_fully_old_or_fully_new_after_the_next_run(
    project: Path, run: Callable[..., Result], seam: str, outcome: str
) -> None:
    """A forked child releases e2b-local-api and dies (os._exit, as SIGKILL would) at a seam of the write.

    Its wheels are not built: they come before the write and are not what this test is about
    (test_release_writes_... builds them).  The next run is a release of another package.
    """
    add_fragment(project, LOCAL_API, "+tidy.misc.md", "Internal tidying.\n")
    before = tree_digest(project)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child never returns
        try:
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(make_release, "build_all", lambda *args, **kwargs: {})
                mp.setattr(make_release, "smoke_test", lambda *args: None)
                real = getattr(transaction, seam)

                def die(root: Path, swaps: Any, *state: str) -> None:
                    if seam == "_finish" or state == ("done",):
                        os._exit(9)
                    real(root, swaps, *state)

                mp.setattr(transaction, seam, die)
                run(project, "release", "e2b-local-api", "--date", DATE)
        except BaseException:
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 9  # it died inside the write
    assert (project / ".codegen-journal.json").exists()

    result = run(project, "release", "e2b")
    assert result.code == 0, result.out + result.err
    said = "rolled back, the tree holds what it held before" if outcome == "old" else "the tree holds its new files"
    assert "release: warning: found a write from " in result.err and said in result.err
    assert "no pending fragments for e2b; nothing written" in result.out
    after = tree_digest(project)
    changed = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
    if outcome == "old":
        assert changed == set()
    else:
        assert changed == {
            f"{LOCAL_API}/pyproject.toml",
            f"{LOCAL_API}/CHANGELOG.md",
            f"{LOCAL_API}/changelog.d/+tidy.misc.md",
        }
        assert {p.name: str(p.version) for p in load_packages(project)}["e2b-local-api"] == "0.1.1"
    assert not [p for p in after if ".codegen-" in p]  # no journal, no temporary sibling


def test_ctrl_c_during_the_release_write_waits_for_it_and_says_the_tree_is_new(
    project: Path, run: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGINT lands while the journal says "swapping"; the write finishes first, and the message says so.

    The wheels are not built (as above): they come before the write.
    """
    add_fragment(project, LOCAL_API, "+tidy.misc.md", "Internal tidying.\n")
    monkeypatch.setattr(make_release, "build_all", lambda *args, **kwargs: {})
    monkeypatch.setattr(make_release, "smoke_test", lambda *args: None)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    real = transaction._write_journal

    def interrupt(root: Path, swaps: Any, state: str) -> None:
        real(root, swaps, state)
        if state == "swapping":
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(transaction, "_write_journal", interrupt)
    try:
        result = run(project, "release", "e2b-local-api", "--date", DATE)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert result.code == 130, result.out + result.err
    assert "interrupted: SIGINT arrived during the write, which finished first: the tree holds the new files" in (
        result.err
    )
    assert {p.name: str(p.version) for p in load_packages(project)}["e2b-local-api"] == "0.1.1"
    assert not (project / ".codegen-journal.json").exists()
    assert not (project / LOCAL_API / "changelog.d/+tidy.misc.md").exists()
