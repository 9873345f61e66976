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
    assert job["steps"][-1]["run"] == 'python -m nox -s generated-files -- --base "$BASE" --no-cache'


def test_ci_runs_the_required_check_without_the_cache() -> None:
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    checks = [line for line in lines if "generated-files" in line and not line.startswith("#")]
    assert checks == ["python3 -m nox -s generated-files -- --no-cache"]


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
