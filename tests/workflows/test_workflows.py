""".github/workflows: zizmor passes; the required check cannot be skipped at the trigger; actions pinned."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
FILES = sorted(WORKFLOWS.glob("*.yml"))
PINNED = re.compile(r"[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40}")


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = YAML(typ="safe").load(path.read_text())
    return data


def test_the_workflows_are_there() -> None:
    assert [p.name for p in FILES] == ["bump.yml", "ci.yml", "generated-files.yml", "release.yml"]


def test_zizmor_passes() -> None:
    zizmor = Path(sys.executable).parent / "zizmor"
    done = subprocess.run(
        [str(zizmor), "--offline", "--strict-collection", "--persona", "pedantic", "--no-progress", str(WORKFLOWS)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_required_check_runs_on_every_pull_request_and_merge_group() -> None:
    on = load(WORKFLOWS / "generated-files.yml")["on"]
    assert "merge_group" in on and "pull_request" in on
    for trigger in on.values():
        assert not (set(trigger or {}) & {"paths", "paths-ignore", "branches-ignore"})
    assert on["pull_request"] is None  # every pull request, whatever its base branch


def test_the_required_check_passes_the_base_revision_and_never_answers_from_a_cache() -> None:
    job = load(WORKFLOWS / "generated-files.yml")["jobs"]["generated-files"]
    checkout = job["steps"][0]
    assert checkout["with"]["fetch-depth"] == 0
    assert job["steps"][-1]["run"] == 'python -I -m nox -s generated-files -- --base "$BASE" --no-cache'


def test_the_required_check_always_runs() -> None:
    """No step decides to skip it: a skip rule is one more input a pull request could steer."""
    steps = load(WORKFLOWS / "generated-files.yml")["jobs"]["generated-files"]["steps"]
    assert [step for step in steps if "if" in step] == []
    assert "git diff" not in (WORKFLOWS / "generated-files.yml").read_text()


def base_step_script(workflow: dict[str, Any]) -> str:
    steps = workflow["jobs"]["generated-files"]["steps"]
    (step,) = [step for step in steps if step.get("id") == "base"]
    script: str = step["run"]
    return script


@pytest.mark.parametrize(
    ("pr_base", "queue_base", "expected"),
    [("a" * 40, "", "a" * 40), ("", "b" * 40, "b" * 40), ("", "", "HEAD")],
    ids=["pull_request", "merge_group", "push"],
)
def test_the_base_step_names_the_pull_requests_base_or_main_itself(
    tmp_path: Path, pr_base: str, queue_base: str, expected: str
) -> None:
    """The step's own script, run by bash in a real repository, for each event."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"}
    author = ["-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", *author, "commit", "-q", "--allow-empty", "-m", "x"], cwd=tmp_path, env=env, check=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, env=env, capture_output=True, text=True)
    output = tmp_path / "output"
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", base_step_script(load(WORKFLOWS / "generated-files.yml"))],
        cwd=tmp_path,
        env={**env, "PR_BASE": pr_base, "QUEUE_BASE": queue_base, "GITHUB_OUTPUT": str(output)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    want = head.stdout.strip() if expected == "HEAD" else expected
    assert output.read_text() == f"sha={want}\n"


def test_ci_runs_the_required_check_against_a_base_without_the_cache() -> None:
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    checks = [line for line in lines if "generated-files" in line and not line.startswith("#")]
    assert checks == ['python3 -I -m nox -s generated-files -- --base "${CODEGEN_BASE:-origin/main}" --no-cache']
    job = load(WORKFLOWS / "ci.yml")["jobs"]["ci-run"]
    assert job["steps"][0]["with"]["fetch-depth"] == 0
    assert job["steps"][-1]["env"]["CODEGEN_BASE"] == (
        "${{ github.event.pull_request.base.sha || github.event.merge_group.base_sha || github.sha }}"
    )


def test_every_check_in_the_workflows_and_ci_run_names_a_base() -> None:
    """No base, no trust: a check without --base exits 2 in a CI checkout, and --trust-tree is never CI's."""
    texts = [path.read_text() for path in FILES] + [(ROOT / ".ci" / "run").read_text()]
    lines = [line for text in texts for line in text.splitlines() if not line.lstrip().startswith("#")]
    runs = [line for line in lines if "generated-files --" in line or "codegen check" in line]
    assert runs and all("--base " in line and "--trust-tree" not in line for line in runs), runs


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_hardening(path: Path) -> None:
    workflow = load(path)
    assert "permissions" in workflow and "concurrency" in workflow
    assert workflow["permissions"] in ({}, {"contents": "read"})
    for name, job in workflow["jobs"].items():
        assert isinstance(job.get("timeout-minutes"), int), f"{path.name}: job {name} has no timeout"
        for step in job["steps"]:
            if "uses" in step:
                assert PINNED.fullmatch(step["uses"]), f"{path.name}: {step['uses']} is not pinned by commit"
            if "actions/checkout" in step.get("uses", ""):
                assert step["with"]["persist-credentials"] is False


def test_id_token_only_where_it_publishes() -> None:
    for path in FILES:
        for name, job in load(path)["jobs"].items():
            writes_id = (job.get("permissions") or {}).get("id-token") == "write"
            assert writes_id == (path.name == "release.yml" and name == "publish"), f"{path.name}: {name}"
    publish = load(WORKFLOWS / "release.yml")["jobs"]["publish"]
    assert publish["permissions"] == {"id-token": "write"}
    assert publish["steps"][-1]["uses"].startswith("pypa/gh-action-pypi-publish@")


def test_ci_runs_ci_run() -> None:
    steps = load(WORKFLOWS / "ci.yml")["jobs"]["ci-run"]["steps"]
    assert steps[-1]["run"] == "bash .ci/run"


def ci_run_bytecode_guard() -> str:
    """The guard in .ci/run: from its `bytecode=` line to its `fi`."""
    text = (ROOT / ".ci" / "run").read_text()
    start = text.index('bytecode="$(')
    return text[start : text.index("\nfi\n", start) + 4]


def test_the_bytecode_guard_runs_before_any_python_in_ci_run_and_the_required_check() -> None:
    """Tracked bytecode runs before the check can look (`python -m pip` imports a committed pip.pyc)."""
    guard = ci_run_bytecode_guard()
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    first_python = next(n for n, line in enumerate(lines) if "python" in line and not line.startswith("#"))
    assert lines.index(guard.splitlines()[0]) < first_python
    steps = load(WORKFLOWS / "generated-files.yml")["jobs"]["generated-files"]["steps"]
    assert "actions/checkout@" in steps[0]["uses"]
    assert steps[1]["name"] == "No tracked bytecode" and steps[1]["run"] == guard
    assert not any("python" in str(step.get("run", "")) for step in steps[:2])


@pytest.mark.parametrize(
    "tracked",
    ["pip.pyc", "packages/x/__pycache__/mod.cpython-311.pyc", "a/b.pyo", "__pycache__/notes.txt", None],
)
def test_the_bytecode_guard_fails_in_one_line_when_git_tracks_bytecode(tmp_path: Path, tracked: str | None) -> None:
    """The guard's own text, run by bash in a real repository, with git from PATH and nothing else."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, env=env)
    (tmp_path / "module.py").write_text("x = 1\n")
    (tmp_path / "untracked.pyc").write_bytes(b"\0")  # only what git tracks counts
    files = ["module.py"]
    if tracked is not None:
        (tmp_path / tracked).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / tracked).write_bytes(b"\0")
        files.append(tracked)
    subprocess.run(["git", "add", "-f", "--", *files], cwd=tmp_path, env=env, check=True)
    author = ["-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", *author, "commit", "-q", "-m", "x"], cwd=tmp_path, env=env, check=True)
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", ci_run_bytecode_guard()],
        cwd=tmp_path, env={**env, "GIT_LITERAL_PATHSPECS": "1"}, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if tracked is None:
        assert (done.returncode, done.stderr) == (0, "")
        return
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"error: git tracks Python bytecode, which would run before the check: `git rm --cached` it: {tracked}"
    ]


def test_pip_and_nox_run_isolated_from_the_checkout() -> None:
    """`python -m pip` puts the current folder first on the path: a committed pip.py would be pip (so `-I`)."""
    texts = [
        (ROOT / ".ci" / "run").read_text(),
        *(p.read_text() for p in (ROOT / ".github" / "workflows").glob("*.yml")),
    ]
    calls = [m.group(0) for text in texts for m in re.finditer(r"\bpython3? (?:-\w+ )*-m (?:pip|nox)\b", text)]
    assert calls and all(" -I " in call for call in calls), calls
