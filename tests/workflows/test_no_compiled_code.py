""".ci/no-compiled-code: the one guard against compiled code that git tracks, and who runs it, before any Python.

Each suffix Python loads code from is tried in a real repository: this interpreter's
importlib.machinery.EXTENSION_SUFFIXES and BYTECODE_SUFFIXES, and the other platforms' (.pyd,
.dylib, CPython's tagged names) and the old .pyo. The guard is bash over `git ls-files`, so it
runs before any Python of the tree could, and the required check runs the base's copy of it.
"""

from __future__ import annotations

import ast
import subprocess
from importlib.machinery import BYTECODE_SUFFIXES, EXTENSION_SUFFIXES
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from release.wheels import COMPILED_SUFFIXES

ROOT = Path(__file__).resolve().parents[2]
GUARD = ROOT / ".ci" / "no-compiled-code"
WORKFLOWS = ROOT / ".github" / "workflows"
ERROR = "error: git tracks compiled code, which Python would run instead of the reviewed source: `git rm --cached` it: "
# What CPython loads on the platforms it ships for, beside what this interpreter says.
OTHER_PLATFORMS = (
    ".cpython-311-x86_64-linux-gnu.so",
    ".cpython-311-darwin.so",
    ".cpython-311-wasm32-wasi.so",
    ".abi3.so",
    ".so",
    ".cp311-win_amd64.pyd",
    ".pyd",
    ".dylib",
    ".pyc",
    ".pyo",
)
SUFFIXES = sorted({*EXTENSION_SUFFIXES, *BYTECODE_SUFFIXES, *OTHER_PLATFORMS})
GIT_ENV = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}


def repository(root: Path, tracked: list[str], untracked: tuple[str, ...] = ()) -> Path:
    """A real repository whose index holds `tracked` (added with -f, past any .gitignore)."""
    env = {**GIT_ENV, "HOME": str(root)}
    subprocess.run(["git", "init", "-q", str(root)], check=True, env=env)
    for rel in ["module.py", *tracked, *untracked]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(b"\0")
    subprocess.run(["git", "add", "-f", "--", "module.py", *tracked], cwd=root, env=env, check=True)
    author = ["-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", *author, "commit", "-q", "-m", "x"], cwd=root, env=env, check=True)
    return root


def guard(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(GUARD), *args],
        cwd=cwd, env={**GIT_ENV, "HOME": str(cwd), **(env or {})}, capture_output=True, text=True, check=False,
    )  # fmt: skip


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_every_suffix_python_loads_code_from_is_refused(tmp_path: Path, suffix: str) -> None:
    """toolkit/printable.abi3.so is imported instead of toolkit/printable.py; a .pyc instead of its source."""
    tracked = f"toolkit/printable{suffix}"
    root = repository(tmp_path / "repo", [tracked])
    done = guard(root)
    assert (done.returncode, done.stderr.splitlines()) == (1, [ERROR + tracked])
    assert suffix.lower().endswith(COMPILED_SUFFIXES)  # and the release's wheel check refuses it too


@pytest.mark.parametrize(
    "tracked",
    ["pip.pyc", "packages/x/__pycache__/mod.cpython-311.pyc", "__pycache__/notes.txt", "a/B.SO", "c/D.PyD"],
)
def test_bytecode_pycache_and_any_case_are_refused(tmp_path: Path, tracked: str) -> None:
    root = repository(tmp_path / "repo", [tracked])
    done = guard(root)
    assert (done.returncode, done.stderr.splitlines()) == (1, [ERROR + tracked])


def test_every_path_is_named_on_one_line_a_newline_quoted(tmp_path: Path) -> None:
    root = repository(tmp_path / "repo", ["a.pyc", "b/c.so", "odd\nname.so"])
    done = guard(root)
    assert (done.returncode, done.stderr.splitlines()) == (1, [ERROR + 'a.pyc b/c.so "odd\\nname.so"'])


def test_a_tree_without_compiled_code_passes(tmp_path: Path) -> None:
    """Only what git tracks counts (an import leaves untracked bytecode); names Python never loads pass."""
    root = repository(
        tmp_path / "repo",
        ["libfoo.so.1", "docs/so.md", "notes.pyc.txt"],
        untracked=("untracked.pyc", "__pycache__/m.cpython-311.pyc", "built.abi3.so"),
    )
    done = guard(root)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_it_checks_the_tree_it_is_given_whatever_git_s_variables_say(tmp_path: Path) -> None:
    """The required check runs the base's guard over the pull request's tree (an argument)."""
    clean = repository(tmp_path / "clean", [])
    tree = repository(tmp_path / "tree", ["toolkit/printable.abi3.so"])
    misdirect = {"GIT_DIR": str(clean / ".git"), "GIT_WORK_TREE": str(clean), "GIT_LITERAL_PATHSPECS": "1"}
    done = guard(clean, str(tree), env=misdirect)
    assert (done.returncode, done.stderr.splitlines()) == (1, [ERROR + "toolkit/printable.abi3.so"])


def test_a_folder_that_is_not_a_checkout_cannot_be_vouched_for(tmp_path: Path) -> None:
    (tmp_path / "x.so").write_bytes(b"\0")
    done = guard(tmp_path, str(tmp_path), env={"GIT_CEILING_DIRECTORIES": str(tmp_path.parent)})
    assert done.returncode == 2 and done.stderr.splitlines()[-1].startswith("error: cannot list the files git tracks")


def test_this_checkout_passes() -> None:
    done = guard(ROOT)
    assert (done.returncode, done.stderr) == (0, "")


# --- who runs it: before any Python of their checkout -----------------------------------------


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = YAML(typ="safe").load(path.read_text())
    return data


def test_ci_run_runs_it_before_any_python() -> None:
    lines = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if not line.startswith("#")]
    first_python = next(n for n, line in enumerate(lines) if "python" in line)
    assert lines.index("bash .ci/no-compiled-code") < first_python


@pytest.mark.parametrize(("workflow", "job"), [("ci.yml", "changelog"), ("release.yml", "build"), ("bump.yml", "bump")])
def test_each_job_that_runs_its_checkout_s_python_runs_it_first(workflow: str, job: str) -> None:
    steps = load(WORKFLOWS / workflow)["jobs"][job]["steps"]
    runs = [str(step.get("run", "")) for step in steps]
    assert runs.index("bash .ci/no-compiled-code") < next(n for n, run in enumerate(runs) if "python" in run)
    assert "actions/checkout@" in steps[0]["uses"]


def test_ci_s_main_job_runs_ci_run_and_the_required_check_runs_the_base_s_guard_first() -> None:
    assert load(WORKFLOWS / "ci.yml")["jobs"]["ci-run"]["steps"][-1]["run"] == "bash .ci/run"
    lines = (ROOT / ".ci" / "required-check").read_text().splitlines()
    code = [n for n, line in enumerate(lines) if line and not line.lstrip().startswith("#")]
    guard_line = lines.index('bash "$here/no-compiled-code" "$tree"')
    assert guard_line < next(n for n in code if "git" in lines[n] and n != guard_line and "diff" in lines[n])
    assert guard_line < next(n for n in code if "-m codegen" in lines[n])


def test_the_release_sessions_run_it_before_installing_anything() -> None:
    source = (ROOT / "noxfile.py").read_text()
    tree = ast.parse(source)
    sessions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    for name in ("release", "release_tag"):
        found = sorted((n.lineno, n.col_offset, n) for n in ast.walk(sessions[name]) if isinstance(n, ast.Call))
        calls = [ast.get_source_segment(source, node) for _, _, node in found]
        guard_at = calls.index("session.run(*NO_COMPILED_CODE, external=True)")
        assert guard_at < calls.index("_install_lock(session, DEV)"), name
    assert 'NO_COMPILED_CODE = ("bash", ".ci/no-compiled-code")' in source
