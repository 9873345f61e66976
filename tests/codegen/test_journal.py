"""The journal is never an input: what a pull request commits, or plants, as a journal steers no verb.

End to end, in real git repositories, with `python -m codegen` and `python -m release`
subprocesses (the tools answered by the memo: nothing here is theirs): a committed journal is
refused by every verb that reads it, an untracked one naming anything but what a codegen write
swaps is refused, and either way the tree, its .git and everything beside it stay byte for byte
as they were.  The same goes for overlay outputs outside the generated folders.  A signal that
lands just after the write returned is told the truth: the tree holds the new files.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.codegen.conftest import (
    PERSON,
    ROOT,
    Result,
    codegen_command,
    commit_all,
    git_repo,
    git_status,
    release_command,
    run_subprocess,
    subprocess_env,
)

JOURNAL = ".codegen-journal.json"
WHEN = "2026-11-30 12:00:00Z"
TAKEOVER = "import os\nos.system('echo pwned')\n"


def everything(top: Path, *, without: tuple[str, ...] = ()) -> dict[str, str]:
    """Every entry under top, .git included: files by digest, symlinks by target, folders by name.

    The run lock (`project/.codegen.lock`, git-ignored) is codegen's own, taken before anything else; so
    are the cache folder and its empty `scratch/`, where `generate` starts the generators before it reads
    anything (a folder left there holds nothing: each run's own scratch folder is removed).
    """
    found: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in (*dirnames, *filenames):
            path = Path(dirpath, name)
            rel = path.relative_to(top).as_posix()
            if (
                rel == "project/.codegen.lock"
                or (rel in ("cache", "cache/scratch") and path.is_dir())
                or any(rel == w or rel.startswith(w + "/") for w in without)
            ):
                continue
            if path.is_symlink():
                found[rel] = "-> " + os.readlink(path)
            elif path.is_dir():
                found[rel] = "dir"
            else:
                found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def journal(*swaps: tuple[str, bool], written: str = WHEN, tag: str = "deadbeef", state: str = "swapping") -> str:
    return json.dumps(
        {"state": state, "tag": tag, "written": written, "swaps": [{"target": t, "existed": e} for t, e in swaps]}
    )


def plant(project: Path, text: str, *, commit: bool, extra: dict[str, str] | None = None) -> None:
    """The journal (and any `extra` files), committed with `git add -f` as a pull request would, or left untracked."""
    files = {JOURNAL: text, **(extra or {})}
    for rel, data in files.items():
        (project / rel).write_text(data, encoding="utf-8")
    if commit:
        repo = git_repo(project)
        repo.git.add("-f", "--", *files)
        repo.index.commit("a pull request commits a journal", author=PERSON, committer=PERSON, skip_hooks=True)


def release_dry_run(project: Path, env: dict[str, str | None]) -> Result:
    (project / "packages/cli/changelog.d/12.fix.md").write_text("A fix.\n", encoding="utf-8")  # something pending
    done = subprocess.run(
        release_command(project, "release", "--dry-run"),
        cwd=ROOT,
        env=subprocess_env(env),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return Result(done.returncode, done.stdout, done.stderr)


VERBS: dict[str, tuple[str, ...]] = {
    "generate": ("generate",),
    "check": ("check",),
    "check-no-cache": ("check", "--no-cache"),
    "bump": ("bump", "v1.0.0"),
    "release": (),
}


def run_verb(verb: str, project: Path, env: dict[str, str | None]) -> Result:
    if verb == "release":
        return release_dry_run(project, env)
    return run_subprocess(project, *VERBS[verb], env=env)


def error_lines(result: Result) -> list[str]:
    return [line for line in result.err.splitlines() if "error: " in line]


# --- a committed journal: refused by every verb that reads it ----------------------------------------

COMMITTED = {
    "checkout": (journal((".", False), written="x"), {}),
    "noxfile": (journal(("noxfile.py", True), written="x"), {".noxfile.py.codegen-old-deadbeef": TAKEOVER}),
}


@pytest.mark.parametrize("verb", VERBS)
@pytest.mark.parametrize("case", COMMITTED)
def test_a_committed_journal_is_refused_and_nothing_is_touched(
    project: Path, env: dict[str, str | None], tmp_path: Path, verb: str, case: str
) -> None:
    text, extra = COMMITTED[case]
    plant(project, text, commit=True, extra=extra)
    (tmp_path / "outside.txt").write_text("mine\n")
    if verb == "release":  # its fragment is part of the "before"
        (project / "packages/cli/changelog.d/12.fix.md").write_text("A fix.\n", encoding="utf-8")
    before = everything(tmp_path)
    result = run_verb(verb, project, env)
    assert result.code == 2, result.out + result.err
    (line,) = error_lines(result)
    assert f"error: {JOURNAL}: committed, but a codegen journal is never committed" in line
    assert f"run `git rm -f {JOURNAL}`, commit, then run again" in line
    assert everything(tmp_path) == before
    assert "pwned" not in result.out + result.err


@pytest.mark.parametrize("target", ["README.md", "tests"])
def test_a_committed_journal_naming_any_file_is_refused_by_the_check(
    project: Path, env: dict[str, str | None], tmp_path: Path, target: str
) -> None:
    plant(project, journal((target, False)), commit=True)
    before = everything(tmp_path)
    result = run_verb("check", project, env)
    assert result.code == 2, result.out + result.err
    assert everything(tmp_path) == before and (project / target).exists()


def test_nox_lists_the_tracked_noxfile_after_a_refused_journal(project: Path, env: dict[str, str | None]) -> None:
    """The journal's backup never replaces noxfile.py: the next `nox -l` reads the reviewed one."""
    text, extra = COMMITTED["noxfile"]
    plant(project, text, commit=True, extra=extra)
    reviewed = (project / "noxfile.py").read_bytes()
    assert run_verb("check", project, env).code == 2
    assert (project / "noxfile.py").read_bytes() == reviewed
    assert (project / ".noxfile.py.codegen-old-deadbeef").read_text() == TAKEOVER


def test_the_journal_is_ignored_by_git(project: Path) -> None:
    (project / JOURNAL).write_text("{}")
    (project / f"{JOURNAL}.tmp").write_text("{}")
    assert git_status(project) == ""


# --- an untracked journal: obeyed only in codegen's exact shape, on codegen's own targets -------------

UNTRACKED = {
    "checkout": (journal((".", False)), "is not a normalized path inside the repository"),
    "readme": (journal(("README.md", False)), "'README.md' is not a path a codegen write swaps"),
    "tests": (journal(("tests", False)), "'tests' is not a path a codegen write swaps"),
    "noxfile": (journal(("noxfile.py", True)), "'noxfile.py' is not a path a codegen write swaps"),
    "dotdot": (
        journal(("packages/python-sdk/e2b/api/../../../../README.md", False)),
        "is not a normalized path inside the repository",
    ),
    "absolute": (journal(("/tmp", False)), "is not a normalized path inside the repository"),
    "tag": (journal(("spec/openapi.yml", True), tag="../../x"), "its tag is not one codegen makes"),
    "escapes": (
        journal(("spec/openapi.yml", True), written="\x1b[2K\rcodegen: clean: all good"),
        "its time is not one codegen writes",
    ),
    "extra-field": (
        json.dumps({"state": "done", "tag": "deadbeef", "written": WHEN, "swaps": [], "run": "rm -rf ."}),
        "its fields must be",
    ),
}


@pytest.mark.parametrize("verb", ["generate", "check", "release"])
@pytest.mark.parametrize("case", UNTRACKED)
def test_an_untracked_journal_naming_anything_else_is_refused(
    project: Path, env: dict[str, str | None], tmp_path: Path, verb: str, case: str
) -> None:
    text, says = UNTRACKED[case]
    plant(project, text, commit=False, extra={".noxfile.py.codegen-old-deadbeef": TAKEOVER})
    if verb == "release":
        (project / "packages/cli/changelog.d/12.fix.md").write_text("A fix.\n", encoding="utf-8")
    before = everything(tmp_path)
    result = run_verb(verb, project, env)
    assert result.code == 2, result.out + result.err
    assert f"{JOURNAL}: cannot recover the interrupted write it records" in result.err
    assert says in result.err and "nothing was touched" in result.err
    assert "\x1b" not in result.out + result.err and "\r" not in result.out + result.err
    assert everything(tmp_path) == before


def test_a_target_with_terminal_escapes_is_printed_escaped(project: Path, env: dict[str, str | None]) -> None:
    plant(project, journal(("\x1b]0;owned\x07\ncodegen: clean", False)), commit=False)
    result = run_verb("check", project, env)
    assert result.code == 2
    assert "\x1b" not in result.err and "\x07" not in result.err
    assert "\\x1b]0;owned\\x07\\ncodegen: clean" in result.err
    assert not [line for line in result.err.splitlines() if line.startswith("codegen: clean")]


def test_a_journal_through_a_symlinked_generated_folder_is_refused(
    project: Path, env: dict[str, str | None], tmp_path: Path
) -> None:
    """The backup a rollback would move into place is a symlink out of the tree: never followed."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "__init__.py").write_text(TAKEOVER)
    (project / "packages/python-sdk/e2b/.api.codegen-old-deadbeef").symlink_to(elsewhere)
    plant(project, journal(("packages/python-sdk/e2b/api", True)), commit=False)
    before = everything(tmp_path)
    result = run_verb("generate", project, env)
    assert result.code == 2, result.out + result.err
    assert "is, or lies under, a symlink" in result.err
    assert everything(tmp_path) == before


# --- overlay outputs: inside a generated folder, or the index is refused ------------------------------


@pytest.mark.parametrize(
    ("verb", "output", "says"),
    [
        ("check", "ABSOLUTE", "is not a normalized relative path"),
        ("generate", "packages/python-sdk/e2b/api/../../../../README.md", "is not a normalized relative path"),
    ],
)
def test_an_overlay_output_outside_the_generated_folders_is_refused(
    project: Path, env: dict[str, str | None], tmp_path: Path, verb: str, output: str, says: str
) -> None:
    outside = tmp_path / "x.py"
    output = str(outside) if output == "ABSOLUTE" else output
    index = project / "templates/overlays/overlays.toml"
    entries = index.read_text().count("[[overlay]]")
    with index.open("a") as file:
        file.write(f'\n[[overlay]]\ntemplate = "error_codes.py.jinja"\noutput = {json.dumps(output)}\n')
    commit_all(project, "a pull request adds an overlay")
    # Fetching the pin writes into the project's .git and the cache: only the trees are compared.
    before = everything(tmp_path, without=("project/.git", "cache"))
    result = run_verb(verb, project, env)
    assert result.code == 2, result.out + result.err
    (line,) = error_lines(result)
    entry = f"[[overlay]] #{entries + 1} (template 'error_codes.py.jinja')"
    assert f"templates/overlays/overlays.toml: {entry}: output {output!r} {says}" in line
    assert everything(tmp_path, without=("project/.git", "cache")) == before and not outside.exists()


# --- a signal just after the write: the message says what the tree holds -----------------------------

SIGNAL_AFTER_WRITE = """\
import os, signal, sys
import codegen.tree.write
real = codegen.tree.write.write_tree
def write_tree_then_sigterm(*args, **kwargs):
    changed = real(*args, **kwargs)
    os.kill(os.getpid(), signal.SIGTERM)  # its handler runs before the next line: the write has returned
    return changed
codegen.tree.write.write_tree = write_tree_then_sigterm
import runpy
runpy.run_module(sys.argv.pop(1), run_name="__main__", alter_sys=True)  # codegen, as codegen_command runs it
"""


def test_sigterm_right_after_the_write_says_the_tree_holds_the_new_files(
    project: Path, env: dict[str, str | None]
) -> None:
    model = project / "packages/python-sdk/e2b/api/client/models/new_sandbox.py"
    model.write_text("edited\n")
    # The module `-m` names, then its arguments: the script runs it once write_tree is hooked.
    command: list[Any] = [sys.executable, "-c", SIGNAL_AFTER_WRITE, *codegen_command(project, "generate")[2:]]
    done = subprocess.run(
        command, cwd=ROOT, env=subprocess_env(env), capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 128 + 15, done.stdout + done.stderr
    assert (
        "codegen: interrupted: SIGTERM arrived after this run settled the tree: the write finished: "
        "the tree holds the new files (" in done.stderr
    )
    assert "nothing was written" not in done.stderr
    assert git_status(project) == ""  # the edited model is the generated one again
