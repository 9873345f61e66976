"""write_tree and compare on a small synthetic tree: all or nothing, every drift kind."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from codegen.errors import CodegenError
from codegen.stage import API_DIR, MANIFEST, WIRE_DIR, Staged, manifest_for
from codegen.tree import compare, write_tree
from tests.codegen.conftest import tree_digest

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
    drifts = {(d.path, d.kind) for d in compare(root, staged(NEW))}
    assert (f"{API_DIR}/__init__.py", "changed") in drifts
    assert (f"{API_DIR}/client/b.py", "missing") in drifts
    assert (f"{API_DIR}/client/gone.py", "stale") in drifts
    assert (f"{API_DIR}/client/mine.py", "unexpected") in drifts
    assert ("spec/openapi.yml", "changed") not in drifts  # the spec is the check's business


def test_compare_ignores_bytecode(root: Path) -> None:
    write_tree(root, staged(NEW))
    cache = root / API_DIR / "client" / "__pycache__"
    cache.mkdir()
    (cache / "a.cpython-311.pyc").write_bytes(b"\0")
    (root / API_DIR / "stray.pyc").write_bytes(b"\0")
    assert compare(root, staged(NEW)) == []


def test_unexpected_file_is_refused_and_kept(root: Path) -> None:
    mine = root / f"{WIRE_DIR}/helpers.py"
    mine.write_bytes(b"mine\n")
    before = tree_digest(root)
    with pytest.raises(CodegenError) as caught:
        write_tree(root, staged(NEW))
    assert [p.where for p in caught.value.problems] == [f"{WIRE_DIR}/helpers.py"]
    assert tree_digest(root) == before


def test_manifest_records_sha256_of_each_generated_file() -> None:
    data = json.loads(manifest_for("c" * 40, NEW))
    assert data["files"] == {p: hashlib.sha256(d).hexdigest() for p, d in sorted(NEW.items())}
    assert data["runtime-commit"] == "c" * 40 and data["roots"] == [API_DIR, WIRE_DIR]
