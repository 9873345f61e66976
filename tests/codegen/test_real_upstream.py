"""The real upstream shape, end to end: the pipeline, the contract and the SDK on the runtime's own spec.

An upstream git repository is built in a temp folder from
../shared/fixtures/e2b-openapi.yml (no operationIds, a dozen tags, shared $ref
responses, error codes in prose) with two commits: the fixture as is, then the
pause change in the runtime's form (tests/codegen/real_upstream/pause-contract.patch).
On a scratch copy of this repository codegen refuses the first commit, `bump`
moves to the second, the check is green, and the SDK, the CLI and the local API
server generated from it pass the same pause, error-mapping and refusal tests
as with this repository's own spec.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest
from git import Repo

from tests.codegen.conftest import PIN, Result, Upstream, run_in_process, unchanged, with_warm_mypy
from tests.fixtures import REAL_SPEC, needs_real_spec
from tests.once_per_run import build_once, copy_tree
from toolkit.changelog import BUMP_TYPES

PAUSE_CHANGE = Path(__file__).parent / "real_upstream" / "pause-contract.patch"
SPEC_PATH = "spec/openapi.yml"
ROOT = Path(__file__).resolve().parents[2]
ENVD_FILES = ("spec/envd/process/process.proto", "spec/envd/filesystem/filesystem.proto", "spec/envd/envd.yaml")
CHANGELOG = "packages/python-sdk/changelog.d"
PACKAGES = ("packages/python-sdk", "packages/local-api", "packages/cli")
# The same tests as with this repository's own spec: pause and error mapping
# through the SDK against the local API server (sync and async, both
# transports), the SDK's pause and refusal mapping, the refusal transport on
# real sockets, and the CLI's pause commands against the local API server.
SDK_TESTS = (
    "tests/local_api/test_e2e_sdk.py",
    "tests/python_sdk/test_sandbox_pause.py",
    "tests/python_sdk/test_exceptions.py",
    "tests/python_sdk/transport/test_real_sockets.py",
    "tests/cli/test_sandbox_local_api.py",
)
# Tests of what the real shape does not change, left out of its runs: the transport's connection pool
# over 1,000 requests (about 25 s of the suite) reads no generated code.
NOT_IN_THE_REAL_SHAPE_RUNS = {"tests/python_sdk/transport/test_real_sockets.py": "not no_leaks_over_1000_requests"}

pytestmark = needs_real_spec


@dataclass(frozen=True)
class RealUpstream:
    url: str
    before: str  # the fixture as synced
    after: str  # plus the pause change
    spec_after: bytes


@pytest.fixture(scope="module")
def real_upstream(tmp_path_factory: pytest.TempPathFactory) -> RealUpstream:
    def build(folder: Path) -> None:
        dest = folder / "runtime"
        Repo.init(dest, initial_branch="main")
        upstream = Upstream(dest)
        for path in ENVD_FILES:  # the data plane, as this repository syncs it: one pin, every spec file
            upstream.commit_bytes((ROOT / path).read_bytes(), f"envd: {path}", path=path)
        before = upstream.commit_bytes(REAL_SPEC.read_bytes(), "the runtime spec (fixture)")
        upstream.repo.git.apply(str(PAUSE_CHANGE))
        after = upstream.commit_bytes((dest / SPEC_PATH).read_bytes(), "pause contract")
        (folder / "commits.json").write_text(json.dumps([before, after]))

    # Once per run: the commits (their dates) must be the same for every worker that reads the bump below.
    folder = build_once(tmp_path_factory, "real-upstream", build)
    before, after = json.loads((folder / "commits.json").read_text())
    dest = folder / "runtime"
    return RealUpstream(str(dest), before, after, (dest / SPEC_PATH).read_bytes())


def env_for(upstream: RealUpstream, cache: Path, **more: str) -> dict[str, str | None]:
    return {"E2B_RUNTIME_REPO": upstream.url, "E2B_CODEGEN_CACHE": str(cache), **more}


def test_codegen_at_the_fixture_commit_refuses_naming_each_pause_element(
    project: Path, real_upstream: RealUpstream, tmp_path: Path
) -> None:
    with unchanged(project):
        result = run_in_process(
            project, "generate", env=env_for(real_upstream, tmp_path / "cache", E2B_RUNTIME_REF=real_upstream.before)
        )
    assert result.code == 2, result.text
    errors = [line for line in result.err.splitlines() if line.startswith("codegen: error: ")]
    for element in (
        "/components/schemas/SandboxPauseRequest/properties/force is missing",
        "/components/schemas/SandboxPauseResult/properties/forced is missing",
        "/paths/~1sandboxes~1{sandboxID}~1pause/post/responses/200 is missing",
        "/paths/~1sandboxes~1{sandboxID}~1pause/post/responses/400 is missing",
        "does not document the error code 'sandbox_pause_refused'",
    ):
        assert any(element in line for line in errors), element
    assert len(errors) == 5, errors
    # The operation map found every operation by method and path: no map miss.
    assert "operation map miss" not in result.err
    # The 503 the change does not document is a warning, not a miss.
    assert "contract warning: /paths/~1sandboxes~1{sandboxID}~1pause/post/responses/503 is missing" in result.err


@pytest.fixture(scope="module")
def bumped(
    pristine_project: Path,
    real_upstream: RealUpstream,
    warm_mypy_cache: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, Result]:
    """A scratch copy of this repository, bumped to the pause change (its pin is not in that upstream).

    Its cache starts with mypy's warm (`warm_cache`): the bump type-checks the hand-written packages.
    """

    def build(folder: Path) -> None:
        root = copy_tree(pristine_project, folder / "project")
        cache = with_warm_mypy(folder / "cache", warm_mypy_cache)
        result = run_in_process(root, "bump", real_upstream.after, env=env_for(real_upstream, cache))
        (folder / "result.json").write_text(json.dumps(asdict(result)))

    folder = build_once(tmp_path_factory, "real-shape", build)
    return folder / "project", Result(**json.loads((folder / "result.json").read_text()))


def test_bump_writes_pin_spec_lock_generated_files_and_fragment(
    bumped: tuple[Path, Result], real_upstream: RealUpstream
) -> None:
    root, result = bumped
    assert result.code == 0, result.text
    after = real_upstream.after
    assert (root / "spec/runtime-ref").read_text() == after + "\n"
    assert (root / SPEC_PATH).read_bytes() == real_upstream.spec_after
    assert json.loads((root / "spec/openapi.lock.json").read_text())["commit"] == after
    assert json.loads((root / "spec/generated-files.json").read_text())["runtime-commit"] == after
    # A towncrier fragment named for the pins it records a change between, typed by the report's semver level.
    (fragment,) = (root / CHANGELOG).glob(f"+runtime-*-{after[:12]}.*.md")
    level = re.search(r"^Semver: \*\*(\w+)\*\*", result.out, re.MULTILINE)
    assert level is not None, result.out
    assert fragment.name == f"+runtime-{PIN[:12]}-{after[:12]}.{BUMP_TYPES[level[1]]}.md"
    assert fragment.read_text().startswith(f"The runtime API from runtime@{PIN[:7]} to runtime@{after[:7]}")
    # The old pin is in another upstream: the old side is the locked spec, said in one line.
    assert f"runtime@{PIN[:7]} is not in {real_upstream.url}: the report's old side is the tracked" in result.err
    # The SDK's names, whatever the upstream calls its operations (it calls them nothing).
    api = root / "packages/python-sdk/e2b/api"
    for module in ("create_sandbox", "list_sandboxes", "get_sandbox", "kill_sandbox", "pause_sandbox"):
        assert (api / "client/api/sandboxes" / f"{module}.py").is_file(), module
    assert (api / "client/models/connect_sandbox.py").is_file()  # the runtime's name for the connect body
    codes = (api / "error_codes.py").read_text()
    assert 'SANDBOX_PAUSE_REFUSED_ERROR_CODE: Final = "sandbox_pause_refused"' in codes
    assert 'SANDBOX_CAPACITY_UNAVAILABLE_ERROR_CODE: Final = "sandbox_capacity_unavailable"' in codes


def test_the_check_is_green_after_the_bump(
    bumped: tuple[Path, Result], real_upstream: RealUpstream, tmp_path: Path
) -> None:
    # On a copy: the check takes its run lock (.codegen.lock) in the project, and other workers copy the shared one.
    root = tmp_path / "project"
    shutil.copytree(bumped[0], root, symlinks=True)
    result = run_in_process(root, "check", env=env_for(real_upstream, tmp_path / "cache"))
    assert result.code == 0, result.text
    assert f"match runtime@{real_upstream.after[:7]}" in result.out


def scratch_python(root: Path, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """This interpreter, with the scratch copy's packages ahead of the installed ones."""
    env = dict(os.environ)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # the shared copy is read-only: other workers copy it meanwhile
    env["PYTHONPATH"] = os.pathsep.join(str(root / package) for package in PACKAGES)
    env.pop("E2B_API_KEY", None)
    env.pop("E2B_API_URL", None)
    return subprocess.run(
        [sys.executable, *args], cwd=root, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def test_the_scratch_copy_runs_its_own_sdk_cli_and_local_api(bumped: tuple[Path, Result]) -> None:
    root, result = bumped
    assert result.code == 0, result.text
    probe = scratch_python(
        root,
        "-c",
        "import e2b, e2b_cli, e2b_local_api, e2b_local_api.wire as w;"
        "print(e2b.__file__, e2b_local_api.__file__, e2b_cli.__file__);"
        "print(w.ConnectSandboxRequest.__name__)",
        timeout=60,
    )
    assert probe.returncode == 0, probe.stderr
    paths, model = probe.stdout.splitlines()
    assert all(path.startswith(str(root)) for path in paths.split()), paths
    assert model == "ConnectSandbox"  # the runtime's schema, not this repository's SandboxConnectRequest


# One test module per run: the runs are the suite's slowest part, and pytest-xdist spreads them over the cores.
@pytest.mark.slow
@pytest.mark.parametrize("tests", SDK_TESTS)
def test_the_sdk_cli_and_local_api_generated_from_it_pass_the_pause_tests(
    bumped: tuple[Path, Result], tests: str
) -> None:
    root, result = bumped
    assert result.code == 0, result.text
    narrowed = ["-k", NOT_IN_THE_REAL_SHAPE_RUNS[tests]] if tests in NOT_IN_THE_REAL_SHAPE_RUNS else []
    run = scratch_python(root, "-m", "pytest", "-q", "-p", "no:cacheprovider", *narrowed, tests, timeout=600)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and " failed" not in run.stdout
