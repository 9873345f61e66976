"""The rebuilt runtime repository is deterministic and matches the tracked spec and pin."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from git import Repo
from openapi_spec_validator import validate
from ruamel.yaml import YAML

from codegen.upstream_history import build_runtime_repo

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "spec" / "openapi.yml"
RUNTIME_REF = ROOT / "spec" / "runtime-ref"
SPEC_IN_RUNTIME = "spec/openapi.yml"


Runtime = tuple[Repo, list[tuple[str, str]]]


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Runtime:
    dest = tmp_path_factory.mktemp("runtime")
    commits = build_runtime_repo(dest)
    return Repo(dest), commits


def spec_at(repo: Repo, commit: str) -> bytes:
    blob = repo.commit(commit).tree / SPEC_IN_RUNTIME
    data: bytes = blob.data_stream.read()
    return data


def load(data: bytes) -> Any:
    return YAML(typ="safe").load(data)


def test_two_builds_give_identical_commit_ids(runtime: Runtime, tmp_path: Path) -> None:
    _, first = runtime
    assert build_runtime_repo(tmp_path / "again") == first
    assert len(first) == 2


def test_final_commit_is_the_tracked_spec_and_pin(runtime: Runtime) -> None:
    repo, commits = runtime
    final = commits[-1][1]
    assert RUNTIME_REF.read_text(encoding="ascii") == final + "\n"
    assert repo.head.commit.hexsha == final
    assert repo.active_branch.name == "main"
    assert spec_at(repo, RUNTIME_REF.read_text(encoding="ascii").strip()) == SPEC.read_bytes()


def test_history_adds_the_pause_contract(runtime: Runtime) -> None:
    repo, commits = runtime
    base = load(spec_at(repo, commits[0][1]))
    final = load(spec_at(repo, commits[-1][1]))

    assert "force" not in base["components"]["schemas"]["SandboxPauseRequest"]["properties"]
    assert "SandboxPauseResult" not in base["components"]["schemas"]
    assert "204" in base["paths"]["/sandboxes/{sandboxID}/pause"]["post"]["responses"]

    assert "force" in final["components"]["schemas"]["SandboxPauseRequest"]["properties"]
    assert "SandboxPauseResult" in final["components"]["schemas"]
    pause_responses = final["paths"]["/sandboxes/{sandboxID}/pause"]["post"]["responses"]
    assert {"200", "400", "503"} <= set(pause_responses) and "204" not in pause_responses
    codes = final["components"]["schemas"]["Error"]["properties"]["error_code"]["x-error-codes"]
    assert "sandbox_pause_refused" in codes


def test_every_version_is_valid_openapi(runtime: Runtime) -> None:
    repo, commits = runtime
    for _, commit in commits:
        validate(load(spec_at(repo, commit)))


def test_non_empty_destination_is_refused(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(ValueError, match="not an empty directory"):
        build_runtime_repo(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_empty_destination_is_accepted(tmp_path: Path) -> None:
    assert len(build_runtime_repo(tmp_path)) == 2
