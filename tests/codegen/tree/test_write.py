"""write_tree and compare on a small synthetic tree: all or nothing, every drift kind."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from git import Repo

from codegen.generation.stage import Staged, manifest_for
from codegen.tree.write import Drift, compare_tree, find_symlinks, write_tree
from tests.codegen.conftest import commit_all, git_repo, tree_digest
from toolkit.errors import ToolError
from toolkit.paths import API_DIR, ENVD_CLIENT_DIR, MANIFEST, SYNC_TWIN_DIR, WIRE_DIR
from toolkit.read import read_or_none

OLD = {
    f"{API_DIR}/__init__.py": b"old init\n",
    f"{API_DIR}/client/a.py": b"a = 1\n",
    f"{API_DIR}/client/gone.py": b"gone = 1\n",
    f"{WIRE_DIR}/models.py": b"old models\n",
}
NEW = {
    f"{API_DIR}/__init__.py": b"new init\n",
    f"{API_DIR}/client/a.py": b"a = 1\n",
    f"{API_DIR}/client/b.py": b"b = 2\n",
    f"{WIRE_DIR}/models.py": b"new models\n",
}


def staged(files: dict[str, bytes], spec: bytes = b"spec: new\n") -> Staged:
    return Staged(spec=spec, lock=b'{"lock": "new"}\n', generated=dict(files), manifest=manifest_for("c" * 40, files))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for rel, data in {
        **OLD,
        "spec/openapi.yml": b"spec: old\n",
        "spec/openapi.lock.json": b"{}\n",
        MANIFEST: manifest_for("b" * 40, OLD),
        "README.md": b"mine\n",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


def test_write_tree_replaces_everything_and_removes_stale(root: Path) -> None:
    changed = write_tree(root, staged(NEW), extra={"spec/runtime-ref": b"c\n", "new/dir/frag.md": b"x\n"})
    assert set(changed) >= {
        f"{API_DIR}/__init__.py",
        f"{API_DIR}/client/b.py",
        f"{API_DIR}/client/gone.py",
        "spec/openapi.yml",
        "spec/runtime-ref",
        "new/dir/frag.md",
    }
    assert not (root / f"{API_DIR}/client/gone.py").exists()
    assert (root / f"{API_DIR}/client/b.py").read_bytes() == b"b = 2\n"
    assert (root / "new/dir/frag.md").read_bytes() == b"x\n"
    assert (root / "README.md").read_bytes() == b"mine\n"
    assert not [p for p in root.rglob("*") if ".codegen-" in p.name]
    assert write_tree(root, staged(NEW), extra={"spec/runtime-ref": b"c\n"}) == []


@pytest.mark.parametrize("fail_at", range(1, 12))
@pytest.mark.parametrize("error", [KeyboardInterrupt, OSError])
def test_write_tree_rolls_back_when_a_rename_fails(
    root: Path, monkeypatch: pytest.MonkeyPatch, fail_at: int, error: type[BaseException]
) -> None:
    before = tree_digest(root)
    real = os.replace
    calls = 0

    def flaky(src: object, dst: object) -> None:
        nonlocal calls
        calls += 1
        if calls == fail_at:
            raise error("interrupted mid-write")
        real(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", flaky)
    try:
        write_tree(root, staged(NEW), extra={"spec/runtime-ref": b"c\n"})
    except error:
        pass
    else:
        assert calls < fail_at, "write_tree finished without reaching the failing rename"
        return
    monkeypatch.undo()
    assert tree_digest(root) == before
    assert not [p for p in root.rglob("*") if ".codegen-" in p.name]


def test_compare_names_every_kind(root: Path) -> None:
    (root / f"{API_DIR}/client/mine.py").write_bytes(b"hand written\n")
    drifts = {(d.path, d.kind) for d in compare_tree(root, staged(NEW))}
    assert (f"{API_DIR}/__init__.py", "changed") in drifts
    assert (f"{API_DIR}/client/b.py", "missing") in drifts
    assert (f"{API_DIR}/client/gone.py", "stale") in drifts
    assert (f"{API_DIR}/client/mine.py", "unexpected") in drifts
    assert ("spec/openapi.yml", "changed") not in drifts  # the spec is the check's business


def test_compare_ignores_only_the_bytecode_imports_leave_untracked(root: Path) -> None:
    """Untracked `__pycache__/*.pyc` is a developer's import cache; anything else in a generated folder shows."""
    write_tree(root, staged(NEW))
    cache = root / API_DIR / "client" / "__pycache__"
    cache.mkdir()
    (cache / "a.cpython-311.pyc").write_bytes(b"\0")
    unknown = [(d.path, d.kind) for d in compare_tree(root, staged(NEW))]
    assert unknown == [(f"{API_DIR}/client/__pycache__/a.cpython-311.pyc", "unexpected")]  # no git: who knows
    Repo.init(root, initial_branch="main")
    assert compare_tree(root, staged(NEW)) == []
    (root / API_DIR / "stray.pyc").write_bytes(b"\0")  # imports never write bytecode beside the source
    (cache / "notes.txt").write_bytes(b"x\n")
    (root / WIRE_DIR / ".hidden").write_bytes(b"x\n")
    assert {(d.path, d.kind) for d in compare_tree(root, staged(NEW))} == {
        (f"{API_DIR}/stray.pyc", "unexpected"),
        (f"{API_DIR}/client/__pycache__/notes.txt", "unexpected"),
        (f"{WIRE_DIR}/.hidden", "unexpected"),
    }


def test_tracked_bytecode_is_unexpected_and_codegen_refuses_it(root: Path) -> None:
    """What git tracks ships with a commit and runs on import: `git add -f` cannot hide it behind .gitignore."""
    write_tree(root, staged(NEW))
    cache = root / API_DIR / "__pycache__"
    cache.mkdir()
    (cache / "a.cpython-311.pyc").write_bytes(b"planted")
    (cache / "b.cpython-311.pyc").write_bytes(b"a developer's own")
    (root / ".gitignore").write_bytes(b"__pycache__/\n*.pyc\n")
    Repo.init(root, initial_branch="main")
    git_repo(root).git.add("-f", f"{API_DIR}/__pycache__/a.cpython-311.pyc")
    commit_all(root, "planted")
    drifts = compare_tree(root, staged(NEW))
    assert drifts == [Drift(f"{API_DIR}/__pycache__/a.cpython-311.pyc", "unexpected", None, b"planted")]
    before = tree_digest(root)
    with pytest.raises(ToolError) as caught:
        write_tree(root, staged(NEW))
    assert [p.where for p in caught.value.problems] == [f"{API_DIR}/__pycache__/a.cpython-311.pyc"]
    assert "git rm --cached" in (caught.value.problems[0].remedy or "")
    assert tree_digest(root) == before
    git_repo(root).git.rm("-q", "--cached", f"{API_DIR}/__pycache__/a.cpython-311.pyc")
    assert compare_tree(root, staged(NEW)) == []  # untracked again: a local cache like the other


def test_a_repository_git_refuses_to_read_stops_the_comparison(root: Path) -> None:
    """Bytecode whose tracking cannot be known is not silently ignored: exit 2, in one line."""
    write_tree(root, staged(NEW))
    (root / API_DIR / "__pycache__").mkdir()
    (root / API_DIR / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0")
    (root / ".git").write_bytes(b"gitdir: /nonexistent/repository\n")
    with pytest.raises(ToolError) as caught:
        compare_tree(root, staged(NEW))
    assert caught.value.exit_code == 2
    [problem] = caught.value.problems
    assert problem.message.startswith("git cannot list the files it tracks under the generated folders: ")
    assert "\n" not in problem.message


def test_unexpected_file_is_refused_and_kept(root: Path) -> None:
    mine = root / f"{WIRE_DIR}/helpers.py"
    mine.write_bytes(b"mine\n")
    before = tree_digest(root)
    with pytest.raises(ToolError) as caught:
        write_tree(root, staged(NEW))
    assert [p.where for p in caught.value.problems] == [f"{WIRE_DIR}/helpers.py"]
    assert tree_digest(root) == before


@pytest.mark.skipif(shutil.which("sha256sum") is None, reason="coreutils' sha256sum is not on PATH")
def test_manifest_records_sha256_of_each_generated_file(root: Path) -> None:
    """Checked against coreutils' sha256sum on the written files: a digest computed independently."""
    write_tree(root, staged(NEW))
    data = json.loads((root / MANIFEST).read_bytes())
    listed = subprocess.run(["sha256sum", *sorted(NEW)], cwd=root, capture_output=True, text=True, check=True).stdout
    independent = {path: digest for digest, path in (line.split("  ", 1) for line in listed.splitlines())}
    assert data["files"] == independent and list(data["files"]) == sorted(NEW)
    assert data["runtime-commit"] == "c" * 40 and data["roots"] == [API_DIR, ENVD_CLIENT_DIR, WIRE_DIR, SYNC_TWIN_DIR]


# --- symlinks: never followed, never read, named as drift -----------------------------


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "environ").write_bytes(b"TOKEN=hunter2\n")
    return outside


def test_a_symlink_to_a_file_outside_is_drift_and_never_read(root: Path, secret: Path) -> None:
    write_tree(root, staged(NEW))
    (root / f"{API_DIR}/client/leak.py").symlink_to(secret / "environ")
    drifts = compare_tree(root, staged(NEW))
    assert drifts == [Drift(f"{API_DIR}/client/leak.py", "symlink", None, None)]


def test_a_generated_folder_that_is_a_symlink_is_drift_and_refused(root: Path, secret: Path) -> None:
    shutil.rmtree(root / WIRE_DIR)
    (root / WIRE_DIR).symlink_to(secret, target_is_directory=True)
    assert find_symlinks(root) == [WIRE_DIR]
    assert Drift(WIRE_DIR, "symlink", None, None) in compare_tree(root, staged(NEW))
    before = tree_digest(secret)
    with pytest.raises(ToolError, match="is a symlink"):
        write_tree(root, staged(NEW))
    assert tree_digest(secret) == before and (root / WIRE_DIR).is_symlink()


@pytest.mark.parametrize("path", ["spec/openapi.lock.json", MANIFEST, "spec/contract.yml", "spec"])
def test_a_symlinked_spec_file_or_folder_is_named(root: Path, secret: Path, path: str) -> None:
    target = root / path
    if target.is_dir():
        shutil.rmtree(target)
    else:
        target.unlink(missing_ok=True)
    target.symlink_to(secret / "environ")
    assert find_symlinks(root) == [path]
    with pytest.raises(ToolError, match="is a symlink"):
        write_tree(root, staged(NEW))


def test_an_extra_path_under_a_symlinked_folder_is_refused(root: Path, secret: Path) -> None:
    (root / "notes").symlink_to(secret, target_is_directory=True)
    with pytest.raises(ToolError, match="is a symlink"):
        write_tree(root, staged(NEW), extra={"notes/frag.md": b"x\n"})
    assert sorted(p.name for p in secret.iterdir()) == ["environ"]


def test_read_or_none_does_not_follow_a_symlink(tmp_path: Path, secret: Path) -> None:
    (tmp_path / "link").symlink_to(secret / "environ")
    assert read_or_none(tmp_path / "link") is None
    assert read_or_none(secret / "environ") == b"TOKEN=hunter2\n"
    assert read_or_none(secret) is None


# --- git's index under a generated folder: a submodule or a symlink the working tree does not show ---


def _index_entry(root: Path, mode: str, path: str, data: bytes) -> None:
    """Commit an index entry of `mode` at `path` without a working-tree file (as a checkout without submodules)."""
    blob = (
        subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=root, input=data, capture_output=True, check=True)
        .stdout.decode()
        .strip()
    )
    repo = git_repo(root)
    repo.git.update_index("--add", "--cacheinfo", f"{mode},{blob},{path}")
    repo.index.update()  # GitPython re-reads the index git wrote
    repo.index.commit(f"a {mode} entry", skip_hooks=True)


@pytest.mark.parametrize(("mode", "kind"), [("160000", "unexpected"), ("120000", "symlink")])
def test_a_submodule_or_symlink_in_the_index_is_drift_and_refused(root: Path, mode: str, kind: str) -> None:
    write_tree(root, staged(NEW))
    Repo.init(root, initial_branch="main")
    commit_all(root, "generated")
    evil = f"{API_DIR}/evil"
    if mode == "160000":
        (root / evil).mkdir()  # what `git clone` leaves for a submodule it does not fetch: an empty folder
    _index_entry(root, mode, evil, b"/etc\n")
    assert compare_tree(root, staged(NEW)) == [Drift(evil, kind, None, None)]
    before = tree_digest(root)
    with pytest.raises(ToolError) as caught:
        write_tree(root, staged(NEW))
    assert [p.where for p in caught.value.problems] == [evil]
    assert "git rm --cached" in (caught.value.problems[0].remedy or "")
    assert tree_digest(root) == before and (root / evil).exists() == (mode == "160000")
    git_repo(root).git.rm("-q", "--cached", evil)
    assert compare_tree(root, staged(NEW)) == []


@pytest.mark.parametrize(
    "outside", [".git/config", "README.md", "spec/openapi.lock.json", f"{API_DIR}/../../README.md"]
)
def test_a_manifest_entry_outside_the_generated_folders_is_never_read(root: Path, outside: str) -> None:
    """The manifest is committed data: naming `.git/config` makes the manifest drift, not that file."""
    write_tree(root, staged(NEW))
    Repo.init(root, initial_branch="main")
    data = json.loads((root / MANIFEST).read_bytes())
    data["files"][outside] = "0" * 64
    (root / MANIFEST).write_text(json.dumps(data, indent=2) + "\n")
    drifts = compare_tree(root, staged(NEW))
    assert [(d.path, d.kind) for d in drifts] == [(MANIFEST, "changed")]
    before = tree_digest(root)
    git_config = (root / ".git/config").read_bytes()
    changed = write_tree(root, staged(NEW))
    assert changed == [MANIFEST]
    after = tree_digest(root)
    assert {p for p in before if before[p] != after.get(p)} == {MANIFEST}
    assert (root / ".git/config").read_bytes() == git_config
