"""The rebuilt runtime repository is deterministic and matches the tracked spec and pin."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from git import Repo
from openapi_spec_validator import validate
from ruamel.yaml import YAML

from codegen.upstream.history import HISTORY_DIR, build_runtime_repo
from toolkit.errors import ToolError

ROOT = Path(__file__).resolve().parents[3]
SPEC = ROOT / "spec" / "openapi.yml"
RUNTIME_REF = ROOT / "spec" / "runtime-ref"
SPEC_IN_RUNTIME = "spec/openapi.yml"
ENVD_FILES = ("spec/envd/process/process.proto", "spec/envd/filesystem/filesystem.proto", "spec/envd/envd.yaml")
ENVD_FIXTURES = ROOT.parent / "shared" / "fixtures" / "envd"


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
    assert len(first) == 4


def test_final_commit_is_the_tracked_spec_and_pin(runtime: Runtime) -> None:
    repo, commits = runtime
    final = commits[-1][1]
    assert RUNTIME_REF.read_text(encoding="ascii") == final + "\n"
    assert repo.head.commit.hexsha == final
    assert repo.active_branch.name == "main"
    assert spec_at(repo, RUNTIME_REF.read_text(encoding="ascii").strip()) == SPEC.read_bytes()
    for path in ENVD_FILES:  # every synced file, not the control plane's alone
        blob = repo.commit(final).tree / path
        assert blob.data_stream.read() == (ROOT / path).read_bytes(), path


def test_the_envd_revision_adds_the_data_plane_and_leaves_the_control_plane(runtime: Runtime) -> None:
    repo, commits = runtime
    (_, before), (subject, envd) = commits[-2], commits[-1]
    assert subject.startswith("Describe envd")
    assert "v2.1.0" in [tag.name for tag in repo.tags if tag.commit.hexsha == envd]
    assert spec_at(repo, envd) == spec_at(repo, before)
    changed = sorted(str(d.b_path) for d in repo.commit(before).diff(envd))
    assert changed == sorted(ENVD_FILES)


def _descriptor(root: Path, name: str) -> Any:
    """The FileDescriptorProto protoc makes of root/name, comments left out, declarations in a fixed order."""
    from codegen.envd.protos import parse_protos, read_descriptors  # the pinned protoc, as codegen runs it

    parsed = read_descriptors(parse_protos({f"spec/envd/{name}": (root / name).read_bytes()}))
    [found] = [file for file in parsed.file if file.name == name]

    def in_order(messages: Any) -> None:
        messages.sort(key=lambda message: message.name)
        for message in messages:
            in_order(message.nested_type)
            message.enum_type.sort(key=lambda enum: enum.name)

    in_order(found.message_type)
    found.enum_type.sort(key=lambda enum: enum.name)
    for enum in found.enum_type:
        enum.value.sort(key=lambda value: value.number)
    for service in found.service:
        service.method.sort(key=lambda method: method.name)
    return found


def _facts(node: Any) -> Any:
    """An OpenAPI document without its prose: what the wire holds."""
    if isinstance(node, dict):
        return {k: _facts(v) for k, v in node.items() if k not in ("description", "summary", "example")}
    if isinstance(node, list):
        return [_facts(v) for v in node]
    return node


@pytest.mark.skipif(not ENVD_FIXTURES.is_dir(), reason="the envd fixtures (../shared/fixtures/envd) are absent")
def test_the_envd_files_carry_the_upstream_facts_and_is_symlink(runtime: Runtime, tmp_path: Path) -> None:
    """The wire facts of E2B's envd (b8029973), plus the `is_symlink = 12` the released SDK speaks; words our own."""
    repo, commits = runtime
    ours = tmp_path / "ours"
    for path in ENVD_FILES:
        target = ours / path.removeprefix("spec/envd/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((repo.commit(commits[-1][1]).tree / path).data_stream.read())
    for name in ("process/process.proto", "filesystem/filesystem.proto"):
        theirs = _descriptor(ENVD_FIXTURES, name)
        if name.startswith("filesystem"):
            [entry] = [m for m in theirs.message_type if m.name == "EntryInfo"]
            entry.field.add(name="is_symlink", number=12, type=8, label=1, json_name="isSymlink")  # TYPE_BOOL
        assert _descriptor(ours, name) == theirs, name
    assert _facts(load((ours / "envd.yaml").read_bytes())) == _facts(load((ENVD_FIXTURES / "envd.yaml").read_bytes()))
    # Text is ours: no comment line of the upstream's is copied.
    for name in ("process/process.proto", "filesystem/filesystem.proto"):
        upstream = {ln.strip() for ln in (ENVD_FIXTURES / name).read_text().splitlines() if "//" in ln}
        assert not upstream & {ln.strip() for ln in (ours / name).read_text().splitlines()}, name


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
    with pytest.raises(ToolError, match="not an empty directory"):
        build_runtime_repo(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_empty_destination_is_accepted(tmp_path: Path) -> None:
    assert len(build_runtime_repo(tmp_path)) == 4


# --- history.toml is data a pull request can change: confined, one-line failures ---------


def hostile_history(tmp_path: Path, old: str = "", new: str = "") -> Path:
    """A copy of spec/upstream-history/ with one edit to history.toml."""
    history = tmp_path / "history"
    shutil.copytree(HISTORY_DIR, history)
    plan = history / "history.toml"
    if old:
        text = plan.read_text()
        assert text.count(old) == 1
        plan.write_text(text.replace(old, new))
    return history


def refused(tmp_path: Path, history: Path) -> str:
    """The one-line problem; DEST is not created and nothing else appears beside it."""
    dest = tmp_path / "out" / "runtime"
    with pytest.raises(ToolError) as caught:
        build_runtime_repo(dest, history)
    assert caught.value.exit_code == 2
    [problem] = caught.value.problems
    assert "\n" not in problem.render()
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []
    return problem.render()


@pytest.mark.parametrize("spec_path", ["/tmp/escaped.yml", "../escaped.yml", "spec/../../escaped.yml", ".git/hooks/x"])
def test_spec_path_outside_the_repository_is_refused(tmp_path: Path, spec_path: str) -> None:
    history = hostile_history(tmp_path, 'spec_path = "spec/openapi.yml"', f"spec_path = {spec_path!r}")
    said = refused(tmp_path, history)
    assert "spec_path must be a relative path inside the repository" in said
    assert not Path("/tmp/escaped.yml").exists() or spec_path != "/tmp/escaped.yml"
    assert not (tmp_path / "escaped.yml").exists()


@pytest.mark.parametrize("source", ["../../pyproject.toml", "/etc/passwd", "sub/base.openapi.yml", "history.toml"])
def test_a_source_outside_the_history_folder_is_refused(tmp_path: Path, source: str) -> None:
    history = hostile_history(tmp_path, 'source = "base.openapi.yml"', f"source = {source!r}")
    said = refused(tmp_path, history)
    assert "source must name a file directly inside spec/upstream-history/" in said


def test_a_source_that_is_a_symlink_is_not_followed(tmp_path: Path) -> None:
    secret = tmp_path / "secret.yml"
    secret.write_text("token: ghs_secret\n")
    history = hostile_history(tmp_path, 'source = "base.openapi.yml"', 'source = "link.yml"')
    (history / "link.yml").symlink_to(secret)
    said = refused(tmp_path, history)
    assert "source 'link.yml' is not a regular file in spec/upstream-history/" in said


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        (
            'step = "write"\nsource = "base.openapi.yml"',
            'step = "run"\nsource = "base.openapi.yml"',
            "unknown step 'run'",
        ),
        ('branch = "main"', 'branch = "--upload-pack=x"', "branch must be a plain branch name"),
        ('tag = "v1.0.0"', 'tag = "-d"', "tag must be a plain tag name"),
        ('date = "2025-03-04T10:15:00+00:00"', 'date = "2025-03-04T10:15:00"', "with its offset"),
        ('author_name = "Runtime Maintainers"', "author_name = 3", "author_name must be a non-empty string"),
        ('branch = "main"', 'branch = "main"\ncommits = 1', "not valid TOML"),
        ('tag = "v1.1.0"', 'tag = "v1.1.0"\nhook = "x"', "unknown key(s) 'hook'"),
    ],
)
def test_a_bad_entry_is_one_line(tmp_path: Path, old: str, new: str, said: str) -> None:
    assert said in refused(tmp_path, hostile_history(tmp_path, old, new))


ENVD_WRITE = '  { path = "spec/envd/envd.yaml", source = "envd.openapi.yml" },'


@pytest.mark.parametrize(
    ("new", "said"),
    [
        ('  { path = "../escaped.yml", source = "envd.openapi.yml" },', "a relative path of plain names"),
        ('  { path = "/tmp/escaped.yml", source = "envd.openapi.yml" },', "a relative path of plain names"),
        ('  { path = "spec/.git/config", source = "envd.openapi.yml" },', "a relative path of plain names"),
        ('  { path = "spec/envd/envd.yaml", source = "../../pyproject.toml" },', "source must name a file directly"),
        ('  { path = "spec/envd/envd.yaml", source = "history.toml" },', "source must name a file directly"),
        ('  { path = "spec/envd/envd.yaml", source = "x.yml", mode = "755" },', "exactly path and source"),
        ('  { path = "spec/envd/process/process.proto", source = "envd.openapi.yml" },', "twice"),
        ('  { path = "spec/envd/process", source = "envd.openapi.yml" },', "as a folder and a file"),
    ],
)
def test_a_bad_file_of_a_write_is_one_line(tmp_path: Path, new: str, said: str) -> None:
    assert said in refused(tmp_path, hostile_history(tmp_path, ENVD_WRITE, new))
    assert not (tmp_path / "escaped.yml").exists()


def test_files_go_only_with_a_write_and_no_source(tmp_path: Path) -> None:
    with_source = hostile_history(tmp_path, "files = [", 'source = "envd.openapi.yml"\nfiles = [')
    assert "files goes with step 'write' and no source" in refused(tmp_path, with_source)


def test_files_that_are_symlinks_are_not_followed(tmp_path: Path) -> None:
    secret = tmp_path / "secret.yml"
    secret.write_text("token: ghs_secret\n")
    history = hostile_history(tmp_path, '"envd.openapi.yml" }', '"link.yml" }')
    (history / "link.yml").symlink_to(secret)
    assert "source 'link.yml' is not a regular file" in refused(tmp_path, history)


def _replace_patch(history: Path, text: str) -> None:
    (history / "pause-contract.patch").write_text(text)


def test_a_patch_that_does_not_apply_is_one_line(tmp_path: Path) -> None:
    history = hostile_history(tmp_path)
    _replace_patch(
        history, "diff --git a/spec/openapi.yml b/spec/openapi.yml\n--- a/spec/openapi.yml\n+++ b/x\n@@ garbage\n"
    )
    said = refused(tmp_path, history)
    assert said.startswith(
        "spec/upstream-history/history.toml (commit 2): pause-contract.patch does not apply: "
        "error: patch with only garbage at line 4; fix spec/upstream-history/"
    )


def test_a_patch_that_writes_outside_the_repository_is_refused(tmp_path: Path) -> None:
    history = hostile_history(tmp_path)
    _replace_patch(
        history,
        "diff --git a/../../escaped.txt b/../../escaped.txt\nnew file mode 100644\n"
        "--- /dev/null\n+++ b/../../escaped.txt\n@@ -0,0 +1 @@\n+escaped\n",
    )
    assert "pause-contract.patch does not apply: error: invalid path '../../escaped.txt';" in refused(tmp_path, history)
    assert not (tmp_path / "escaped.txt").exists()


def test_a_patch_that_makes_a_symlink_is_refused(tmp_path: Path) -> None:
    """A symlink in the rebuilt tree would let a later write step leave DEST."""
    history = hostile_history(tmp_path)
    _replace_patch(
        history,
        "diff --git a/out b/out\nnew file mode 120000\n--- /dev/null\n+++ b/out\n"
        f"@@ -0,0 +1 @@\n+{tmp_path}\n\\ No newline at end of file\n",
    )
    assert "the history makes out a mode 120000 entry; only files" in refused(tmp_path, history)


def _rebuild_runtime(root: Path, dest: Path) -> subprocess.CompletedProcess[str]:
    """`python -m codegen rebuild-runtime DEST` on the project at `root`, in a real subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "codegen", "--root", str(root), "rebuild-runtime", str(dest)],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_rebuild_runtime_fails_in_one_line_with_exit_2(tmp_path: Path) -> None:
    """The command line, in a real subprocess, on a project whose history a pull request edited."""
    root = tmp_path / "project"
    shutil.copytree(HISTORY_DIR, root / "spec" / "upstream-history")
    plan = root / "spec" / "upstream-history" / "history.toml"
    plan.write_text(plan.read_text().replace('spec_path = "spec/openapi.yml"', 'spec_path = "/tmp/x"'))
    dest = tmp_path / "runtime"
    done = _rebuild_runtime(root, dest)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        "codegen: error: spec/upstream-history/history.toml: spec_path must be a relative path inside the "
        "repository (no '..', no .git), not '/tmp/x'; fix spec/upstream-history/ (history.toml says how it works), "
        "then rebuild"
    ]
    assert not dest.exists()


@pytest.mark.parametrize("link", ["spec", "spec/upstream-history"])
def test_a_committed_symlink_above_the_history_is_not_followed(tmp_path: Path, link: str) -> None:
    """`spec` (or the history folder) committed as a symlink to a history elsewhere: refused, in a real subprocess."""
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(HISTORY_DIR, elsewhere / "upstream-history")
    root = tmp_path / "project"
    (root / "spec").mkdir(parents=True)
    if link == "spec":
        (root / "spec").rmdir()
        (root / "spec").symlink_to(elsewhere, target_is_directory=True)
    else:
        (root / link).symlink_to(elsewhere / "upstream-history", target_is_directory=True)
    before = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*"))
    dest = tmp_path / "runtime"
    done = _rebuild_runtime(root, dest)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith("codegen: error: ") and "history.toml is missing, or is (or lies in) a symlink" in line
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == before
    assert not dest.exists()
