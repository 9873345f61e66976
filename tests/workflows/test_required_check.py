""".ci/required-check: the base revision's checker over a pull request's tree as data, in real git repositories.

As generated-files.yml runs it: the base is one checkout (its .ci/, codegen/ and release/ run),
the pull request another (a clone with the change committed on top), and the checker's
interpreter has the base's codegen lock (here: this test environment's, which has the same
pins; codegen's tools answered by the run's memo). The issue's attack is a one-line edit of
codegen/tree/write.py that makes the tree's own checker skip the sandbox classes, plus a payload
appended to one of them: the tree's own checker answers "clean", the base's answers drift. The
verdict logic (which changes are the pipeline's, when drift is fatal) is tried quickly with a
stand-in checker.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from tests.codegen.conftest import (  # noqa: F401  (fixtures, shared with the codegen tests)
    CODEGEN_ENV,
    codegen_module,
    commit_all,
    generation_memo,
    git_repo,
    pristine_project,
    pristine_upstream,
)

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ".ci/required-check"
SANDBOX_SYNC = "packages/python-sdk/e2b/sandbox_sync/main.py"
PIPELINE_SAID = "generated-files: this pull request changes the pipeline: code owners must review"
GITHUB_VARIABLES = ("GITHUB_ACTIONS", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY")


def pipeline_list(name: str) -> list[str]:
    """A bash array of .ci/required-check (PIPELINE or GENERATORS), as written there (quotes read as bash does)."""
    (line,) = [line for line in (ROOT / SCRIPT).read_text().splitlines() if line.startswith(f"{name}=(")]
    return shlex.split(line[len(name) + 2 : -1])


def base_sha(base: Path) -> str:
    return str(git_repo(base).head.commit.hexsha)


def clone(base: Path, dest: Path) -> Path:
    """The pull request's checkout: a clone of the base (so the base commit is in its history)."""
    subprocess.run(["git", "clone", "--quiet", str(base), str(dest)], check=True, capture_output=True)
    return dest


def required_check(
    base: Path, tree: Path, sha: str, *, python: str = sys.executable, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`CHECKER_PYTHON=python bash base/.ci/required-check tree sha`, from a folder that is neither."""
    full = {k: v for k, v in os.environ.items() if k not in (*CODEGEN_ENV, *GITHUB_VARIABLES, "PYTHONPATH")}
    full.update({"CHECKER_PYTHON": python, **(env or {})})
    return subprocess.run(
        ["bash", str(base / SCRIPT), str(tree), sha],
        cwd=tree.parent, env=full, capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip


def said(done: subprocess.CompletedProcess[str]) -> str:
    """A failed assertion's message: all the check printed (a crash in it says itself on stderr only)."""
    return done.stdout + done.stderr


# --- the real checker over the project ---------------------------------------------------


@pytest.fixture
def base(pristine_project: Path, tmp_path: Path) -> Path:  # noqa: F811  (the fixture, imported above)
    dest = tmp_path / "base"
    shutil.copytree(pristine_project, dest, symlinks=True)
    return dest


@pytest.fixture
def checker_env(pristine_upstream: Path, tmp_path: Path, generation_memo: Path) -> dict[str, str]:  # noqa: F811
    """The real checker's environment, its interpreter one whose codegen's tools the memo answers (`memo_python`)."""
    return {
        "E2B_RUNTIME_REPO": str(pristine_upstream),
        "E2B_CODEGEN_CACHE": str(tmp_path / "cache"),
        "CHECKER_PYTHON": str(memo_python(tmp_path, generation_memo)),
    }


def memo_python(tmp_path: Path, memo: Path) -> Path:
    """A CHECKER_PYTHON that runs the script's `-E -s -m codegen ARGS` as codegen with the memo's tools.

    What these tests read is the script's doing (which checkout runs, what of the tree is data, the
    verdict and its words): the tools decide it only through their outputs, the same for the same inputs.
    """
    script = tmp_path / "memo-python"
    expected = "-E -s -m codegen"
    script.write_text(
        "#!/bin/sh\n"
        f'[ "$1 $2 $3 $4" = {shlex.quote(expected)} ] || {{ echo "memo-python: not {expected}: $*" >&2; exit 99; }}\n'
        "shift 4\n"
        f'exec {shlex.join([sys.executable, "-E", "-s", *codegen_module(memo=memo)])} "$@"\n'
    )
    script.chmod(0o755)
    return script


def plant_payload(tree: Path, marker: Path) -> None:
    """A line of code appended to a generated sandbox class: it would run on `import e2b`."""
    path = tree / SANDBOX_SYNC
    path.write_text(path.read_text() + f"import os; os.system('touch {marker}')\n")


def blind_the_checker(tree: Path, marker: Path) -> None:
    """The issue's one-line edit of codegen/tree/write.py, and a line that shows whether that code ever ran."""
    path = tree / "codegen" / "tree" / "write.py"
    text = path.read_text()
    assert text.count("        elif actual != data:\n") == 1, "codegen/tree/write.py's compare changed: update the edit"
    text = text.replace("        elif actual != data:\n", '        elif actual != data and "sandbox_" not in path:\n')
    path.write_text(text + f"\nimport pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n")


def test_the_base_s_checker_answers_drift_where_the_tree_s_own_checker_was_blinded(
    base: Path,
    tmp_path: Path,
    checker_env: dict[str, str],
    generation_memo: Path,  # noqa: F811
) -> None:
    tree = clone(base, tmp_path / "tree")
    ran, payload = tmp_path / "the-tree-s-codegen-ran", tmp_path / "payload-ran"
    blind_the_checker(tree, ran)
    plant_payload(tree, payload)
    commit_all(tree, "a hostile pull request")
    sha = base_sha(base)

    done = required_check(base, tree, sha, env=checker_env)
    assert f"{PIPELINE_SAID} (`codegen/tree/write.py`)" in done.stdout
    assert f"  changed          {SANDBOX_SYNC}  (fix: `nox -s codegen`, then commit)" in done.stdout, said(done)
    assert "+import os; os.system" not in done.stdout and "-import os; os.system" in done.stdout  # the diff
    # The blinded checker is a change to what generates: drift stays drift, and the job says how
    # such a change lands (two steps, or a code owner's bypass).
    assert (
        "generated-files: this pull request changes what generates (`codegen/tree/write.py`) "
        "and the base revision's checker says drift: land the pipeline change first"
    ) in done.stdout
    assert done.returncode == 1, said(done)
    assert not ran.exists() and not payload.exists()  # nothing of the tree ran

    # The same tree's own checker, as the old workflow ran it, says clean: the attack is real.
    own = subprocess.run(
        [sys.executable, *codegen_module(memo=generation_memo), "check", "--base", sha, "--no-cache"],
        cwd=tree, env={**os.environ, **checker_env}, capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert own.returncode == 0 and "codegen: clean" in own.stdout + own.stderr, own.stdout + own.stderr
    assert ran.exists()


def test_a_payload_in_a_generated_file_fails_the_required_check(
    base: Path, tmp_path: Path, checker_env: dict[str, str]
) -> None:
    tree = clone(base, tmp_path / "tree")
    plant_payload(tree, tmp_path / "payload-ran")
    commit_all(tree, "a payload")
    done = required_check(base, tree, base_sha(base), env=checker_env)
    assert done.returncode == 1, said(done)
    assert f"  changed          {SANDBOX_SYNC}" in done.stdout, said(done)
    assert PIPELINE_SAID not in done.stdout


def test_the_tree_s_client_templates_never_run(base: Path, tmp_path: Path, checker_env: dict[str, str]) -> None:
    """The issue's payload in the tree's templates/client/: the checker renders its own; the verdict is the base's."""
    marker = tmp_path / "template-ran"
    tree = clone(base, tmp_path / "tree")
    template = tree / "templates/client/endpoint_macros.py.jinja"
    payload = '{# x #}{{ cycler.__init__.__globals__.os.system("id > ' + str(marker) + '") }}\n'
    template.write_text(template.read_text() + payload)
    commit_all(tree, "a client template that runs a command")
    done = required_check(base, tree, base_sha(base), env=checker_env)
    assert not marker.exists()
    assert done.returncode == 0, said(done)  # the base's templates generate what the tree holds
    assert f"{PIPELINE_SAID} (`templates/client/endpoint_macros.py.jinja`)" in done.stdout
    assert "codegen: warning: the tree's templates/client/ differs from this checker's" in done.stderr


def test_a_comment_in_a_lock_input_does_not_make_drift_a_pass(
    base: Path, tmp_path: Path, checker_env: dict[str, str]
) -> None:
    """The issue's case: `# comment` in requirements/codegen.in, a payload in a generated file: drift, exit 1."""
    tree = clone(base, tmp_path / "tree")
    lock_input = tree / "requirements/codegen.in"
    lock_input.write_text(lock_input.read_text() + "# comment\n")
    plant_payload(tree, tmp_path / "payload-ran")
    commit_all(tree, "a comment, and a payload")
    done = required_check(base, tree, base_sha(base), env=checker_env)
    assert done.returncode == 1, said(done)
    assert f"  changed          {SANDBOX_SYNC}" in done.stdout, said(done)
    assert PIPELINE_SAID not in done.stdout  # a comment is not a pipeline change


@pytest.mark.parametrize(
    ("path", "old", "new"),
    [
        (".github/workflows/generated-files.yml", "bash base/.ci/required-check tree", "true"),
        ("noxfile.py", '["python", "-m", "codegen", "check", *session.posargs]', '["true"]'),
        (".ci/run", '"$PYTHON" -I -m nox -s generated-files -- --base "${CODEGEN_BASE:-origin/main}"', "true"),
    ],
    ids=["workflow", "noxfile", "ci-run"],
)
def test_a_check_switched_off_in_the_tree_still_fails(
    base: Path, tmp_path: Path, checker_env: dict[str, str], path: str, old: str, new: str
) -> None:
    """Editing the workflow, the nox session or .ci/run to skip the check: the base's copy runs instead.

    Those files run nothing of the generation, so the pull request is told that code owners must
    review it, and its drift stays fatal.
    """
    tree = clone(base, tmp_path / "tree")
    text = (tree / path).read_text()
    assert old in text, f"{path} no longer runs the check as {old!r}: update the edit"
    (tree / path).write_text(text.replace(old, new))
    plant_payload(tree, tmp_path / "payload-ran")
    commit_all(tree, "the check switched off, and a payload")
    done = required_check(base, tree, base_sha(base), env=checker_env)
    assert done.returncode == 1, said(done)
    assert f"{PIPELINE_SAID} (`{path}`)" in done.stdout
    assert f"  changed          {SANDBOX_SYNC}" in done.stdout, said(done)


def test_a_clean_pull_request_passes_and_github_gets_the_outputs(
    base: Path, tmp_path: Path, checker_env: dict[str, str]
) -> None:
    tree = clone(base, tmp_path / "tree")
    (tree / "README.md").write_text((tree / "README.md").read_text() + "\nA line.\n")
    commit_all(tree, "docs")
    output, summary = tmp_path / "output", tmp_path / "summary"
    github = {"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary)}
    done = required_check(base, tree, base_sha(base), env={**checker_env, **github})
    assert done.returncode == 0, said(done)
    assert "codegen: clean" in said(done) and PIPELINE_SAID not in done.stdout
    assert output.read_text() == "pipeline-change=false\nverdict=clean\n"
    assert "**clean** (exit 0)" in summary.read_text()


def test_compiled_code_in_the_tree_is_refused_before_the_checker_runs(base: Path, tmp_path: Path) -> None:
    """A native extension that would shadow toolkit/printable.py: the base's guard refuses it."""
    tree = clone(base, tmp_path / "tree")
    (tree / "toolkit" / "printable.abi3.so").write_bytes(b"\x7fELF")
    git_repo(tree).git.add("-f", "toolkit/printable.abi3.so")
    commit_all(tree, "an extension module")
    done = required_check(base, tree, base_sha(base), python="/nonexistent/python")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "error: git tracks compiled code, which Python would run instead of the reviewed source: "
        "`git rm --cached` it: toolkit/printable.abi3.so"
    ]
    assert done.stdout == ""


# --- the verdict, with a stand-in checker ---------------------------------------------------


@pytest.fixture
def small_base(tmp_path: Path) -> Path:
    """A small repository with this checkout's .ci/ and a file in each place the verdict looks at."""
    root = tmp_path / "base"
    shutil.copytree(ROOT / ".ci", root / ".ci")
    for rel in ("README.md", "codegen/cli.py", "requirements/dev.txt", "requirements/codegen.in", "packages/x/y.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n")
    subprocess.run(["git", "init", "--quiet", "--initial-branch", "main", str(root)], check=True)
    commit_all(root, "base")
    return root


def stand_in(tmp_path: Path, status: int, text: str = "codegen: stand-in") -> Path:
    """A 'python' that logs where and how it was called, prints `text` and exits `status`."""
    script = tmp_path / "stand-in-python"
    log = tmp_path / "stand-in.log"
    script.write_text(f'#!/bin/sh\necho "$PWD $*" >> {log}\necho {text!r}\nexit {status}\n')
    script.chmod(0o755)
    return script


@pytest.mark.parametrize(
    ("changed", "status", "job", "pipeline", "generators"),
    [
        ("packages/x/y.py", 0, 0, False, False),
        ("packages/x/y.py", 1, 1, False, False),
        ("packages/x/y.py", 2, 2, False, False),
        ("README.md", 1, 1, False, False),
        ("requirements/dev.txt", 1, 1, True, False),  # a pipeline change, but not one that generates
        (".github/CODEOWNERS", 1, 1, True, False),
        ("release/tag.py", 2, 2, True, False),
        ("python_api/compare.py", 1, 1, True, False),  # bump's and api-check's, not the checker's
        ("packages/x/pyproject.toml", 1, 1, True, False),  # what the wheel holds and installs
        ("codegen/cli.py", 0, 0, True, True),
        # Drift is never a pass: a new pipeline's output lands after it, or past a code owner's bypass.
        ("codegen/cli.py", 1, 1, True, True),
        ("toolkit/paths.py", 1, 1, True, True),  # what codegen stands on decides its output too
        ("templates/client/endpoint_macros.py.jinja", 1, 1, True, True),
        ("requirements/codegen.in", 1, 1, True, True),  # a real change of the lock's input
        ("requirements/codegen.txt", 2, 2, True, True),
        ("codegen/cli.py", 143, 143, True, True),  # an interrupted check is never a verdict
    ],
)
def test_the_verdict(
    small_base: Path, tmp_path: Path, changed: str, status: int, job: int, pipeline: bool, generators: bool
) -> None:
    tree = clone(small_base, tmp_path / "tree")
    (tree / changed).parent.mkdir(parents=True, exist_ok=True)
    (tree / changed).write_text("changed\n")
    commit_all(tree, "a change")
    sha = base_sha(small_base)
    done = required_check(small_base, tree, sha, python=str(stand_in(tmp_path, status)))
    assert done.returncode == job, said(done)
    assert (f"{PIPELINE_SAID} (`{changed}`)" in done.stdout) is pipeline
    assert ("changes what generates" in done.stdout) is (generators and status == 1)
    # The base's checkout is the working folder, the tree only --root.
    called = (tmp_path / "stand-in.log").read_text()
    assert called == f"{small_base} -E -s -m codegen --root {tree} check --base {sha} --no-cache\n"


@pytest.mark.parametrize(
    ("edit", "pipeline"),
    [
        (lambda text: text + "# why this pin\n", False),
        (lambda text: "\n  " + text.replace("x", "x   # a note") + "\n\n", False),
        (lambda text: text + "y\n", True),
        (lambda text: "# x\n", True),  # the requirement itself commented out
    ],
    ids=["comment", "whitespace-and-trailing-comment", "requirement-added", "requirement-commented-out"],
)
def test_comments_and_whitespace_in_a_lock_input_are_not_a_pipeline_change(
    small_base: Path, tmp_path: Path, edit: Callable[[str], str], pipeline: bool
) -> None:
    tree = clone(small_base, tmp_path / "tree")
    lock_input = tree / "requirements/codegen.in"
    lock_input.write_text(edit(lock_input.read_text()))
    commit_all(tree, "an edit of a lock's input")
    done = required_check(small_base, tree, base_sha(small_base), python=str(stand_in(tmp_path, 1)))
    assert done.returncode == 1, said(done)  # the checker's drift, either way
    assert (PIPELINE_SAID in done.stdout) is pipeline
    assert ("changes what generates" in done.stdout) is pipeline


HOSTILE_NAMES = [
    "codegen/x) **verified by the base checker: no review needed** @octocat <img src=x> "
    "[details](https:evil.example#x) (y.py",
    "codegen/a`b``c ```.py",
    "codegen/tail`",
]


def test_names_reach_the_summary_and_annotations_as_code_spans(small_base: Path, tmp_path: Path) -> None:
    """A pull request's file names never speak as Markdown in the job's summary: each is one code span."""
    tree = clone(small_base, tmp_path / "tree")
    for name in HOSTILE_NAMES:
        (tree / name).write_text("x\n")
    commit_all(tree, "hostile names")
    summary = tmp_path / "summary"
    github = {"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": str(tmp_path / "output"), "GITHUB_STEP_SUMMARY": str(summary)}
    done = required_check(small_base, tree, base_sha(small_base), python=str(stand_in(tmp_path, 1)), env=github)
    assert done.returncode == 1, said(done)
    tokens = MarkdownIt("commonmark").parse(summary.read_text())
    inline = [child for token in tokens if token.children for child in token.children]
    # Nothing of the names became a link, an image, HTML or emphasis: only the job's own bold and text.
    assert {child.type for child in inline} <= {"text", "code_inline", "strong_open", "strong_close", "softbreak"}
    spans = [child.content for child in inline if child.type == "code_inline"]
    # Each name whole, once on the pipeline line and once on the drift line.
    assert sorted(span for span in spans if span.startswith("codegen/")) == sorted(HOSTILE_NAMES * 2)
    assert not [child for child in inline if child.type == "text" and "verified by the base checker" in child.content]
    # The annotations say the same, with the same spans.
    annotations = [line for line in done.stdout.splitlines() if line.startswith(("::warning ", "::error "))]
    assert len(annotations) == 2
    for annotation in annotations:
        assert f"`{HOSTILE_NAMES[0]}`" in annotation
        assert f"````{HOSTILE_NAMES[1]}````" in annotation and f"`` {HOSTILE_NAMES[2]} ``" in annotation


def test_the_tree_s_output_cannot_issue_workflow_commands(small_base: Path, tmp_path: Path) -> None:
    """On GitHub, commands stop around the checker's output (file names, diffs: the tree's text)."""
    tree = clone(small_base, tmp_path / "tree")
    (tree / "codegen" / "cli.py").write_text("changed\n")
    commit_all(tree, "a change")
    python = stand_in(tmp_path, 1, "::error title=fake::codegen: clean")
    github = {"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": str(tmp_path / "output")}
    done = required_check(small_base, tree, base_sha(small_base), python=str(python), env=github)
    lines = done.stdout.splitlines()
    forged = lines.index("::error title=fake::codegen: clean")
    stop = [n for n, line in enumerate(lines) if line.startswith("::stop-commands::")]
    assert len(stop) == 1 and stop[0] < forged
    token = lines[stop[0]].removeprefix("::stop-commands::")
    assert re.fullmatch(r"[0-9a-f]{32}", token) and lines[forged + 1] == f"::{token}::"
    # Its own annotations come outside that window, one line each.
    assert lines[0].startswith("generated-files: this pull request changes the pipeline")
    assert lines[1] == "::warning title=pipeline change::" + lines[0].removeprefix("generated-files: ")
    assert lines[-1].startswith("::error title=drift with a pipeline change::this pull request changes what generates")
    assert (tmp_path / "output").read_text() == "pipeline-change=true\nverdict=drift\n"


def test_a_base_that_is_not_a_commit_is_refused(small_base: Path, tmp_path: Path) -> None:
    tree = clone(small_base, tmp_path / "tree")
    for base in ("--output=/tmp/x", ""):
        done = required_check(small_base, tree, base, python=str(stand_in(tmp_path, 0)))
        assert done.returncode == 2 and "the base revision must be a commit" in done.stderr
    missing = required_check(small_base, tree, "f" * 40, python=str(stand_in(tmp_path, 0)))
    assert missing.returncode == 2 and "cannot compare" in missing.stderr
    assert not (tmp_path / "stand-in.log").exists()


def test_codeowners_own_exactly_the_pipeline() -> None:
    """.github/CODEOWNERS gives code owners what the required check calls the pipeline, and nothing else."""
    lines = (ROOT / ".github" / "CODEOWNERS").read_text().splitlines()
    rules = [line.split() for line in lines if line.strip() and not line.startswith("#")]
    assert all(len(rule) >= 2 and all(owner.startswith("@") for owner in rule[1:]) for rule in rules)
    assert [rule[0].removeprefix("/") for rule in rules] == pipeline_list("PIPELINE")
    generators = pipeline_list("GENERATORS")
    assert all(any(g.startswith(p) for p in pipeline_list("PIPELINE")) for g in generators)
