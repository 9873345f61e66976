"""One pin, every spec file: the envd files synced byte for byte, locked, checked offline, missing or extra refused."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.codegen.conftest import OFFLINE, Result, Upstream, commit_all, git_status, unchanged

ENVD_FILES = ("spec/envd/process/process.proto", "spec/envd/filesystem/filesystem.proto", "spec/envd/envd.yaml")


def hand_edit(project: Path, path: str) -> None:
    target = project / path
    comment = b"\n# edited here\n" if path.endswith(".yaml") else b"\n// edited here\n"
    target.write_bytes(target.read_bytes() + comment)


def test_the_lock_records_every_envd_file_at_the_pin(project: Path, upstream: Upstream) -> None:
    lock = json.loads((project / "spec/envd.lock.json").read_text())
    pin = (project / "spec/runtime-ref").read_text().strip()
    assert lock["commit"] == pin
    for path in ENVD_FILES:
        blob = upstream.repo.commit(pin).tree / path
        assert lock["files"][path] == blob.hexsha
        assert (project / path).read_bytes() == blob.data_stream.read()


@pytest.mark.parametrize("path", ENVD_FILES)
def test_a_hand_edit_to_an_envd_file_is_drift_naming_it(project: Path, run: Callable[..., Result], path: str) -> None:
    hand_edit(project, path)
    with unchanged(project):
        result = run(project, "check", "--trust-tree")
    assert result.code == 1, result.text
    assert f"hand-edited spec {path}" in result.out
    restored = run(project, "generate")
    assert restored.code == 0, restored.text
    assert git_status(project) == ""


@pytest.mark.parametrize("path", ENVD_FILES)
def test_a_hand_edit_is_drift_offline_too(offline_project: Path, run: Callable[..., Result], path: str) -> None:
    """Offline, the locked blob stands in (from git's copy), never the edited file."""
    hand_edit(offline_project, path)
    with unchanged(offline_project):
        result = run(offline_project, "check", "--base", "main", **OFFLINE)
    assert result.code == 1, result.text
    assert f"hand-edited spec {path}" in result.out


def test_a_file_added_to_spec_envd_here_is_unexpected_and_never_removed(
    project: Path, run: Callable[..., Result]
) -> None:
    (project / "spec/envd/notes.proto").write_text("// mine\n")
    with unchanged(project):
        checked = run(project, "check", "--trust-tree")
        assert checked.code == 1, checked.text
        assert "unexpected       spec/envd/notes.proto" in checked.out
        generated = run(project, "generate")
    assert generated.code == 2, generated.text
    assert "spec/envd/notes.proto: is inside spec/envd/ but [tool.codegen] envd-files does not name it" in generated.err


def _remove_at_upstream(upstream: Upstream, path: str) -> str:
    upstream.repo.index.remove([path], working_tree=True)
    return upstream.repo.index.commit(f"drop {path}").hexsha


@pytest.mark.parametrize("path", ENVD_FILES)
def test_a_locked_file_missing_at_the_pin_is_one_line_exit_2_nothing_written(
    project: Path, upstream: Upstream, run: Callable[..., Result], path: str
) -> None:
    commit = _remove_at_upstream(upstream, path)
    started = time.perf_counter()
    with unchanged(project):
        result = run(project, "generate", E2B_RUNTIME_REF=commit)
    assert time.perf_counter() - started < 30
    assert result.code == 2, result.text
    said = [line for line in result.err.splitlines() if "error:" in line]
    assert said == [f"codegen: error: pyproject.toml [tool.codegen] envd-files: {path} does not exist at "
                    f"runtime@{commit[:7]}"], result.err  # fmt: skip


def test_an_extra_file_at_the_pin_is_named_exit_2_nothing_written(
    project: Path, upstream: Upstream, run: Callable[..., Result]
) -> None:
    commit = upstream.commit_bytes(b'syntax = "proto3";\npackage volume;\n', "volumes", path="spec/envd/volume/v.proto")
    with unchanged(project):
        result = run(project, "generate", E2B_RUNTIME_REF=commit)
    assert result.code == 2, result.text
    assert f"spec/envd/volume/v.proto is at runtime@{commit[:7]} but envd-files does not name it" in result.err
    assert "add it to envd-files" in result.err


def test_an_envd_lock_for_another_pin_cannot_stand_in_offline(
    offline_project: Path, run: Callable[..., Result]
) -> None:
    lock_path = offline_project / "spec/envd.lock.json"
    lock = json.loads(lock_path.read_text())
    lock["commit"] = "0" * 40
    lock_path.write_text(json.dumps(lock, indent=2) + "\n")
    commit_all(offline_project, "an envd lock of another pin")
    with unchanged(offline_project):
        result = run(offline_project, "generate", **OFFLINE)
    assert result.code == 2, result.text
    assert "the tracked envd files cannot stand in: spec/envd.lock.json records runtime@0000000" in result.err


@pytest.mark.parametrize(
    ("files", "said"),
    [
        ('["spec/envd/../openapi.yml"]', "not a .proto, .yaml, .yml file of plain names under spec/envd/"),
        ('["/etc/passwd"]', "not a .proto, .yaml, .yml file of plain names under spec/envd/"),
        ('["spec/envd/google/protobuf/any.proto"]', "would shadow protoc's well-known types"),
        ('["spec/envd/a.yaml", "spec/envd/b.yaml"]', "more than one YAML file"),
        ('["spec/envd/a.proto", "spec/envd/a.proto"]', "names a file twice"),
        ('"spec/envd/a.proto"', "must be a list"),
    ],
)
def test_envd_files_holds_plain_paths_under_spec_envd(
    project: Path, run: Callable[..., Result], files: str, said: str
) -> None:
    pyproject = project / "pyproject.toml"
    text = pyproject.read_text()
    start = text.index("envd-files = [")
    pyproject.write_text(text[:start] + f"envd-files = {files}\n" + text[text.index("]\n", start) + 2 :])
    with unchanged(project):
        result = run(project, "generate")
    assert result.code == 2, result.text
    assert said in result.err


def test_an_envd_lock_rewritten_by_the_change_cannot_vouch_offline(
    offline_project: Path, run: Callable[..., Result]
) -> None:
    """A pull request edits envd.yaml and writes its blob id into the envd lock: only the upstream vouches."""
    from codegen.upstream.spec_lock import git_blob_id
    from tests.codegen.conftest import git_repo

    git_repo(offline_project).git.checkout("-q", "-b", "pr")
    hand_edit(offline_project, "spec/envd/envd.yaml")
    lock_path = offline_project / "spec/envd.lock.json"
    lock = json.loads(lock_path.read_text())
    lock["files"]["spec/envd/envd.yaml"] = git_blob_id((offline_project / "spec/envd/envd.yaml").read_bytes())
    lock_path.write_text(json.dumps(lock, indent=2) + "\n")
    commit_all(offline_project, "envd.yaml edited, its lock rewritten")
    with unchanged(offline_project):
        result = run(offline_project, "check", "--base", "main", **OFFLINE)
    assert result.code == 2, result.text
    assert "this change moves or touches the pin (spec/envd.lock.json differ" in result.err
