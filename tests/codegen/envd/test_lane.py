"""Bad envd input at the pin: one line naming the file (and line where protoc gives one), exit 2, nothing written."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.codegen.conftest import Result, Upstream, unchanged

PROCESS = "spec/envd/process/process.proto"
FILESYSTEM = "spec/envd/filesystem/filesystem.proto"
HTTP = "spec/envd/envd.yaml"


def commit_envd_edit(upstream: Upstream, path: str, old: bytes, new: bytes) -> str:
    data = (upstream.repo.commit("main").tree / path).data_stream.read()
    assert data.count(old) == 1, old
    return upstream.commit_bytes(data.replace(old, new), f"edit {path}", path=path)


def refused(project: Path, run: Callable[..., Result], commit: str) -> list[str]:
    """The error lines of a generation at `commit`: exit 2, within seconds, the tree as it was."""
    started = time.perf_counter()
    with unchanged(project):
        result = run(project, "generate", E2B_RUNTIME_REF=commit)
    assert time.perf_counter() - started < 30
    assert result.code == 2, result.text
    return [line for line in result.err.splitlines() if line.startswith("codegen: error")]


def test_a_proto_syntax_error_names_the_file_and_line(
    project: Path, upstream: Upstream, run: Callable[..., Result]
) -> None:
    commit = commit_envd_edit(upstream, PROCESS, b"message ListRequest {}", b"message ListRequest {")
    [line] = refused(project, run, commit)
    assert line.startswith(f"codegen: error: {PROCESS}:"), line
    assert line.split(":")[3].isdigit(), line


def test_a_duplicate_field_number_names_the_file_and_line(
    project: Path, upstream: Upstream, run: Callable[..., Result]
) -> None:
    commit = commit_envd_edit(upstream, FILESYSTEM, b"bool is_symlink = 12;", b"bool is_symlink = 11;")
    [line] = refused(project, run, commit)
    assert line.startswith(f"codegen: error: {FILESYSTEM}:"), line
    assert "Field number 11 has already been used" in line


def test_an_import_outside_spec_envd_is_refused(project: Path, upstream: Upstream, run: Callable[..., Result]) -> None:
    commit = commit_envd_edit(upstream, PROCESS, b"package process;", b'package process;\nimport "/etc/passwd";')
    [line] = refused(project, run, commit)
    assert line.startswith(f"codegen: error: {PROCESS}:"), line
    assert "imports '/etc/passwd'" in line


def test_an_envd_yaml_that_is_not_openapi_is_refused(
    project: Path, upstream: Upstream, run: Callable[..., Result]
) -> None:
    commit = upstream.commit_bytes(b"swagger: '2.0'\ninfo: {title: envd, version: '1'}\npaths: {}\n", "old", path=HTTP)
    lines = refused(project, run, commit)
    assert lines and all(HTTP in line for line in lines), lines


def test_an_envd_yaml_the_validator_refuses_is_refused(
    project: Path, upstream: Upstream, run: Callable[..., Result]
) -> None:
    commit = commit_envd_edit(upstream, HTTP, b'        "204":\n          description: envd answers\n', b"")
    lines = refused(project, run, commit)
    assert lines and all(HTTP in line for line in lines), lines


def test_an_rpc_whose_streaming_kind_changed_is_a_contract_miss(
    project: Path, upstream: Upstream, run: Callable[..., Result]
) -> None:
    unary, streamed = b"returns (ListResponse);", b"returns (stream ListResponse);"
    commit = commit_envd_edit(upstream, PROCESS, unary, streamed)
    [line] = refused(project, run, commit)
    miss = "contract miss: process.Process/List is server-streaming (needs unary)"
    assert line.startswith(f"codegen: error: {PROCESS}: {miss}"), line


def test_a_missing_rpc_and_a_missing_operation_are_contract_misses_with_their_remedy(
    project: Path, upstream: Upstream, run: Callable[..., Result]
) -> None:
    commit_envd_edit(upstream, FILESYSTEM, b"  rpc Move(MoveRequest) returns (MoveResponse);\n", b"")
    commit = commit_envd_edit(upstream, HTTP, b"  /health:\n    get:\n", b"  /healthz:\n    get:\n")
    with unchanged(project):
        result = run(project, "generate", E2B_RUNTIME_REF=commit)
    assert result.code == 2, result.text
    assert "contract miss: filesystem.Filesystem/Move is missing" in result.err
    assert "contract miss: /paths/~1health/get is missing" in result.err
    assert "land it upstream" in result.err or "the contract lands upstream first" in result.err


@pytest.mark.parametrize("name", [b"class", b"None"])
def test_an_rpc_named_by_a_python_keyword_is_refused(
    project: Path, upstream: Upstream, run: Callable[..., Result], name: bytes
) -> None:
    commit = commit_envd_edit(upstream, PROCESS, b"  rpc Update(UpdateRequest)", b"  rpc " + name + b"(UpdateRequest)")
    [line] = refused(project, run, commit)
    assert line.startswith(f"codegen: error: {PROCESS}: the RPC name 'Process.{name.decode()}'"), line
