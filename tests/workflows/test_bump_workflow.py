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
    generation_memo,
    pristine_project,
    pristine_upstream,
    project,
    run_in_process,
    upstream,
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
        env={"E2B_RUNTIME_REPO": str(mirror), "E2B_CODEGEN_CACHE": str(tmp_path / "cache")},
    )
    assert result.code == 0, result.text
    assert f"{commit!r} is commit -> commit {commit}" in result.err
