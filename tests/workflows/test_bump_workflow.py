"""bump.yml's Mirror step, run as GitHub runs it, then bump from its mirror: no token needed past that step.

The runtime repository is a local one here (RUNTIME_URL), with a new commit on its main branch to
pin by its id, as a release manager would.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ruamel.yaml import YAML

from tests.codegen.conftest import (  # noqa: F401  (fixtures, shared with the codegen tests)
    Upstream,
    cache,
    commit_all,
    generation_memo,
    pristine_project,
    pristine_upstream,
    project,
    run_in_process,
    upstream,
    warm_cache,
    warm_mypy_cache,
)

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "not-a-real-token-5b1f"


def mirror_script() -> str:
    steps = YAML(typ="safe").load((ROOT / ".github/workflows/bump.yml").read_text())["jobs"]["bump"]["steps"]
    (step,) = [step for step in steps if step.get("name") == "Mirror the runtime repository"]
    script: str = step["run"]
    return script


def new_commit(text: str) -> str:
    return text + "# a change since the pin\n"


def test_bump_runs_from_the_mirror_the_token_step_made(
    project: Path,  # noqa: F811
    upstream: Upstream,  # noqa: F811
    warm_cache: Path,  # noqa: F811  (the bump type-checks the hand-written packages)
    tmp_path: Path,
) -> None:
    commit = upstream.commit_edit(new_commit)
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "RUNTIME_URL": upstream.url,
        "RUNTIME_READ_TOKEN": TOKEN,
        "RUNNER_TEMP": str(runner_temp),
    }
    # GitHub's `shell: bash`: bash --noprofile --norc -eo pipefail {0}.
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", mirror_script()],
        cwd=project, env=env, capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    mirror = runner_temp / "runtime.git"
    refs = subprocess.run(
        ["git", "--git-dir", str(mirror), "for-each-ref", "--format=%(refname)"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert "refs/heads/main" in refs and any(ref.startswith("refs/tags/") for ref in refs)
    # The token was a header for that one fetch: nothing of it is on disk.
    written = b"".join(path.read_bytes() for path in mirror.rglob("*") if path.is_file())
    assert TOKEN.encode() not in written

    # The bump step: the mirror as the runtime repository, no secret in its environment.
    result = run_in_process(
        project,
        "bump",
        commit,
        "--dry-run",
        env={"E2B_RUNTIME_REPO": str(mirror), "E2B_CODEGEN_CACHE": str(warm_cache)},
    )
    assert result.code == 0, result.text
    assert f"{commit!r} is commit -> commit {commit}" in result.err


def step_script(job: str, name: str) -> str:
    steps = YAML(typ="safe").load((ROOT / ".github/workflows/bump.yml").read_text())["jobs"][job]["steps"]
    (step,) = [step for step in steps if step.get("name") == name]
    script: str = step["run"]
    return script


def run_step(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full = {"PATH": os.environ["PATH"], "HOME": str(cwd.parent), **env}
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=cwd, env=full, capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip


def test_the_pull_request_job_gets_the_bump_s_change_as_a_patch_on_a_fresh_checkout(tmp_path: Path) -> None:
    """The bump job's workspace (where package code ran) never reaches the job with the pull-request token.

    What package code could leave there (a git hook, a file outside spec/ and packages/) is not in
    the patch the Report step writes; the pull-request job applies that patch to a fresh clone.
    """
    origin = tmp_path / "origin"
    for rel, text in {"spec/runtime-ref": "a" * 40 + "\n", "packages/x/y.py": "x = 1\n", "README.md": "r\n"}.items():
        (origin / rel).parent.mkdir(parents=True, exist_ok=True)
        (origin / rel).write_text(text)
    subprocess.run(["git", "init", "--quiet", "--initial-branch", "main", str(origin)], check=True)
    commit_all(origin, "base")
    workspace = tmp_path / "bump-workspace"
    subprocess.run(["git", "clone", "--quiet", str(origin), str(workspace)], check=True)
    # What a bump writes, and what package code running beside it could add.
    (workspace / "spec/runtime-ref").write_text("b" * 40 + "\n")
    (workspace / "packages/x/y.py").write_bytes(b"x = 2\n\x00binary\n")
    fragment = workspace / f"packages/python-sdk/changelog.d/+runtime-{'a' * 12}-{'b' * 12}.feature.md"
    fragment.parent.mkdir(parents=True)
    fragment.write_text("The runtime API from runtime@aaaaaaa to runtime@bbbbbbb (semver: minor):\n- a change\n")
    (workspace / "README.md").write_text("planted\n")
    (workspace / ".git/hooks/pre-commit").write_text("#!/bin/sh\necho planted\n")
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()
    # The whole report, which bump writes with --report: the pull request's body.
    whole = "# API changes: runtime@aaaaaaa -> runtime@bbbbbbb\n\nSemver: **minor** — forced by: ...\n"
    (runner_temp / "bump-report.md").write_text(whole)
    output, summary = tmp_path / "output", tmp_path / "summary"
    github = {"RUNNER_TEMP": str(runner_temp), "GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary)}
    report = run_step(step_script("bump", "Report"), workspace, github)
    assert report.returncode == 0, report.stdout + report.stderr
    assert "changed=true\ndraft=false\ntitle=Bump runtime to bbbbbbbbbbbb (semver: minor)\n" == output.read_text()

    fresh = tmp_path / "pull-request-workspace"
    subprocess.run(["git", "clone", "--quiet", str(origin), str(fresh)], check=True)
    done = run_step(step_script("pull-request", "Apply the bump's change"), fresh, {"RUNNER_TEMP": str(runner_temp)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert (fresh / "spec/runtime-ref").read_text() == "b" * 40 + "\n"
    assert (fresh / "packages/x/y.py").read_bytes() == b"x = 2\n\x00binary\n"
    assert (fresh / fragment.relative_to(workspace)).read_text() == fragment.read_text()
    assert (fresh / "README.md").read_text() == "r\n"  # outside spec/ and packages/: not in the patch
    assert not (fresh / ".git/hooks/pre-commit").exists()
    assert (runner_temp / "release-pr/body.md").read_text() == whole
    assert whole in summary.read_text()


def test_the_report_step_reads_the_report_bump_wrote(tmp_path: Path) -> None:
    """No report (bump wrote nothing): no pull request; a report with the hand-written section: a draft."""
    workspace = tmp_path / "workspace"
    for rel in ("spec/runtime-ref", "packages/x/y.py"):
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text("c" * 40 + "\n")
    subprocess.run(["git", "init", "--quiet", "--initial-branch", "main", str(workspace)], check=True)
    commit_all(workspace, "base")
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()
    output, summary = tmp_path / "output", tmp_path / "summary"
    github = {"RUNNER_TEMP": str(runner_temp), "GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary)}
    nothing = run_step(step_script("bump", "Report"), workspace, github)
    assert nothing.returncode == 0, nothing.stdout + nothing.stderr
    assert output.read_text() == "changed=false\n"
    output.unlink()
    whole = "## Hand-written code to update\n\n- `x.py:1` (**new**): ...\n\n# API changes: ...\n\nSemver: **major**\n"
    (runner_temp / "bump-report.md").write_text(whole)
    (workspace / "spec/runtime-ref").write_text("d" * 40 + "\n")
    drafted = run_step(step_script("bump", "Report"), workspace, github)
    assert drafted.returncode == 0, drafted.stdout + drafted.stderr
    assert output.read_text() == "changed=true\ndraft=true\ntitle=Bump runtime to dddddddddddd (semver: major)\n"
    assert (runner_temp / "release-pr/body.md").read_text() == whole
