""".github/workflows, read as YAML: the required check runs the base's checker over the tree as data; hardening.

zizmor passes; the required check cannot be skipped at the trigger; actions are pinned. What the
required check's script does with real repositories is tests/workflows/test_required_check.py's.
"""

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
    """pull_request_target, not pull_request: GitHub runs the base branch's copy of the workflow file."""
    on = load(WORKFLOWS / "generated-files.yml")["on"]
    assert set(on) == {"pull_request_target", "merge_group", "push"}
    for trigger in on.values():
        assert not (set(trigger or {}) & {"paths", "paths-ignore", "branches-ignore"})
    assert on["pull_request_target"] is None  # every pull request, whatever its base branch
    assert on["push"] == {"branches": ["main"]}


def test_the_one_ignored_zizmor_finding_says_why() -> None:
    """zizmor flags every pull_request_target; the ignore is on that line alone, under the reason."""
    lines = (WORKFLOWS / "generated-files.yml").read_text().splitlines()
    ignores = [n for n, line in enumerate(lines) if "zizmor: ignore" in line]
    assert [lines[n].strip() for n in ignores] == ["pull_request_target: # zizmor: ignore[dangerous-triggers]"]
    reason = " ".join(line.strip("# ") for line in lines[ignores[0] - 4 : ignores[0]])
    assert "never" in reason and "read-only" in reason and "no secret" in reason


def required_job() -> dict[str, Any]:
    job: dict[str, Any] = load(WORKFLOWS / "generated-files.yml")["jobs"]["generated-files"]
    return job


def test_the_required_check_has_a_read_only_token_and_no_secret() -> None:
    workflow = load(WORKFLOWS / "generated-files.yml")
    assert workflow["permissions"] == {"contents": "read"}
    assert list(workflow["jobs"]) == ["generated-files"] and "permissions" not in required_job()
    text = (WORKFLOWS / "generated-files.yml").read_text()
    assert "secrets." not in text and "github.token" not in text and "GITHUB_TOKEN" not in text


def test_the_required_check_checks_out_the_base_to_run_and_the_pull_request_as_data() -> None:
    steps = required_job()["steps"]
    checkouts = [step for step in steps if "actions/checkout@" in step.get("uses", "")]
    assert [step["with"] for step in checkouts] == [
        {"ref": "${{ steps.revisions.outputs.base }}", "path": "base", "persist-credentials": False},
        {
            "ref": "${{ steps.revisions.outputs.head }}",
            "path": "tree",
            "fetch-depth": 0,  # the base revision and the merge base, for --base
            "persist-credentials": False,
        },
    ]
    # No local action (`uses: ./...`) and nothing but GitHub's own checkout and setup-python.
    assert {step["uses"].split("@")[0] for step in steps if "uses" in step} == {
        "actions/checkout",
        "actions/setup-python",
    }


def run_scripts(job: dict[str, Any]) -> list[str]:
    """Each `run` of the job, its comment lines dropped."""
    return [
        "\n".join(line for line in step["run"].splitlines() if not line.lstrip().startswith("#"))
        for step in job["steps"]
        if "run" in step
    ]


def test_nothing_from_the_pull_request_s_tree_is_executed() -> None:
    """No nox, noxfile or .ci/run; every script run is the base's; tree/ is only an argument."""
    job = required_job()
    assert not any("working-directory" in step for step in job["steps"])
    scripts = run_scripts(job)
    for script in scripts:
        for banned in ("nox", ".ci/run", "pip install -e", "tree/", "./tree", "cd "):
            assert banned not in script, (banned, script)
    assert [s for s in scripts if "tree" in s] == [
        'CHECKER_PYTHON="$RUNNER_TEMP/checker/bin/python" bash base/.ci/required-check tree "$BASE"'
    ]
    (install,) = [s for s in scripts if "pip install" in s]
    assert install.splitlines() == [
        'python -I -m venv "$RUNNER_TEMP/checker"',
        '"$RUNNER_TEMP/checker/bin/python" -I -m pip install --quiet --require-hashes --no-deps '
        "-r base/requirements/codegen.txt",
    ]


def test_the_required_check_runs_the_base_s_checker_with_the_tree_as_root_and_no_cache() -> None:
    """.ci/required-check: the base's codegen/ (cwd: the base's checkout) over --root TREE."""
    lines = (ROOT / ".ci" / "required-check").read_text().splitlines()
    (call,) = [line for line in lines if "-m codegen" in line]
    assert call == (
        '(cd "$checker" && "$python" -E -s -m codegen --root "$tree" check --base "$base" --no-cache) || status=$?'
    )
    assert 'checker="$(dirname "$here")"' in lines


def test_the_required_check_always_runs() -> None:
    """No step decides to skip it: a skip rule is one more input a pull request could steer."""
    steps = required_job()["steps"]
    assert [step for step in steps if "if" in step] == []
    assert "git diff" not in (WORKFLOWS / "generated-files.yml").read_text()


def revisions_step_script(workflow: dict[str, Any]) -> str:
    steps = workflow["jobs"]["generated-files"]["steps"]
    (step,) = [step for step in steps if step.get("id") == "revisions"]
    script: str = step["run"]
    return script


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        ({"PR_BASE": "a" * 40, "PR_HEAD": "b" * 40}, ("a" * 40, "b" * 40)),
        ({"QUEUE_BASE": "c" * 40, "QUEUE_HEAD": "d" * 40}, ("c" * 40, "d" * 40)),
        ({}, ("e" * 40, "e" * 40)),
    ],
    ids=["pull_request_target", "merge_group", "push"],
)
def test_the_revisions_step_names_the_base_and_the_tree(
    tmp_path: Path, event: dict[str, str], expected: tuple[str, str]
) -> None:
    """The step's own script, run by bash, for each event (a push to main: main checks itself)."""
    output = tmp_path / "output"
    env = {"PR_BASE": "", "PR_HEAD": "", "QUEUE_BASE": "", "QUEUE_HEAD": "", **event}
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", revisions_step_script(load(WORKFLOWS / "generated-files.yml"))],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", **env, "SHA": "e" * 40, "GITHUB_OUTPUT": str(output)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert output.read_text() == f"base={expected[0]}\nhead={expected[1]}\n"


def test_ci_runs_the_required_check_against_a_base_without_the_cache() -> None:
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    checks = [line for line in lines if "generated-files" in line and not line.startswith("#")]
    assert checks == ['"$PYTHON" -I -m nox -s generated-files -- --base "${CODEGEN_BASE:-origin/main}" --no-cache']
    job = load(WORKFLOWS / "ci.yml")["jobs"]["ci-run"]
    assert job["steps"][0]["with"]["fetch-depth"] == 0
    assert job["steps"][-1]["env"]["CODEGEN_BASE"] == (
        "${{ github.event.pull_request.base.sha || github.event.merge_group.base_sha || github.sha }}"
    )


def test_every_check_in_the_workflows_and_ci_run_names_a_base() -> None:
    """No base, no trust: a check without --base exits 2 in a CI checkout, and --trust-tree is never CI's."""
    texts = [path.read_text() for path in FILES] + [
        (ROOT / ".ci" / name).read_text() for name in ("run", "required-check")
    ]
    lines = [line for text in texts for line in text.splitlines() if not line.lstrip().startswith("#")]
    runs = [line for line in lines if "generated-files --" in line or re.search(r"-m codegen .*check", line)]
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


def test_pip_and_nox_run_isolated_from_the_checkout() -> None:
    """`python -m pip` puts the current folder first on the path: a committed pip.py would be pip (so `-I`)."""
    texts = [
        (ROOT / ".ci" / "run").read_text(),
        (ROOT / ".ci" / "required-check").read_text(),
        *(p.read_text() for p in (ROOT / ".github" / "workflows").glob("*.yml")),
    ]
    # `"$PYTHON"` too: .ci/run calls the interpreter pyenv's shim stands for.
    pattern = re.compile(r"\bpython3?\"? (?:-\w+ )*-m (?:pip|nox)\b", re.IGNORECASE)
    calls = [m.group(0) for text in texts for m in pattern.finditer(text)]
    assert sum(call.startswith("PYTHON") for call in calls) == 3, calls
    assert all(" -I " in call for call in calls), calls


def test_the_runtime_token_is_only_in_the_step_that_mirrors_the_runtime_repository() -> None:
    """bump.yml: the token in one step that runs git alone; the bump (package code) reads its mirror, no secret."""
    workflow = load(WORKFLOWS / "bump.yml")
    assert "env" not in workflow and list(workflow["jobs"]) == ["bump", "pull-request"]
    job = workflow["jobs"]["bump"]
    assert "env" not in job
    steps = job["steps"]
    holding = [n for n, step in enumerate(steps) if "RUNTIME_READ_TOKEN" in str(step)]
    assert len(holding) == 1
    mirror = steps[holding[0]]
    assert mirror["name"] == "Mirror the runtime repository"
    assert mirror["env"]["RUNTIME_READ_TOKEN"] == "${{ secrets.RUNTIME_READ_TOKEN }}"
    assert [key for key, value in mirror["env"].items() if "secrets." in value] == ["RUNTIME_READ_TOKEN"]
    # It runs git, never the checkout's code: no Python, nox or script of the repository.
    (script,) = run_scripts({"steps": [mirror]})
    assert not re.search(r"\b(python3?|nox|pip|bash|source)\b|\./|\.ci/", script), script
    (bump,) = [step for step in steps if step.get("name") == "Bump"]
    assert steps.index(bump) > holding[0]
    assert bump["env"]["E2B_RUNTIME_REPO"] == "${{ runner.temp }}/runtime.git"
    assert 'mirror="$RUNNER_TEMP/runtime.git"' in script
    # No other step of the bump job has a secret.
    assert [n for n, step in enumerate(steps) if "secrets." in str(step)] == holding


def test_the_pull_request_token_is_in_a_job_that_runs_no_repository_code() -> None:
    """bump.yml: package code ran in the bump job's workspace; the pull-request token lives in a fresh job."""
    job = load(WORKFLOWS / "bump.yml")["jobs"]["pull-request"]
    assert job["needs"] == "bump" and "env" not in job
    steps = job["steps"]
    assert [step.get("uses", "").split("@")[0] or step["run"] for step in steps] == [
        "actions/checkout",
        "actions/download-artifact",
        "git apply --include='spec/*' --include='packages/*' \"$RUNNER_TEMP/release-pr/change.patch\"",
        "peter-evans/create-pull-request",
    ]
    assert [n for n, step in enumerate(steps) if "secrets." in str(step)] == [3]
    assert steps[3]["with"]["token"] == "${{ secrets.RELEASE_PR_TOKEN }}" and "env" not in steps[3]
