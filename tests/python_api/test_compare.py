"""python_api.compare.diff_generated: the regenerated folders against the tree, package by package (griffe);
griffe's readings remembered by the files read."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from python_api import compare, reader
from python_api.distributions import Distribution, list_distributions
from toolkit.errors import EXIT_CANNOT_RUN, ToolError
from toolkit.paths import GENERATED_ROOTS, Project

WIRE = "packages/local-api/e2b_local_api/wire"
CLIENT_MODELS = "packages/python-sdk/e2b/api/client/models"


def generated_files(root: Path) -> dict[str, bytes]:
    """What the tree's generated folders hold, as a regeneration would stage it."""
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for folder in GENERATED_ROOTS
        for path in (root / folder).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }


def packages_read(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The packages griffe is asked to read, one entry per side."""
    read: list[str] = []
    read_api = reader.read_api

    def spy(package: Distribution, where: Path) -> dict[str, Any]:
        read.append(package.name)
        return read_api(package, where)

    monkeypatch.setattr(reader, "read_api", spy)
    return read


def test_only_the_package_whose_generated_files_changed_is_read(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    staged = generated_files(project)
    init = f"{CLIENT_MODELS}/__init__.py"
    staged[f"{CLIENT_MODELS}/sandbox_note.py"] = b"class SandboxNote:\n    text: str\n"
    staged[init] += b"from .sandbox_note import SandboxNote\n"
    read = packages_read(monkeypatch)

    diffs = {diff.package: diff for diff in compare.diff_generated(project, staged, GENERATED_ROOTS)}

    assert set(read) == {"e2b"}  # both sides of e2b; the local server's wire models are as the tree has them
    assert diffs["e2b-local-api"] == compare.ApiDiff("e2b-local-api", (), ())
    assert diffs["e2b"].added == ("e2b.api.client.models.sandbox_note (module)",) and not diffs["e2b"].breaks


def test_a_changed_wire_model_is_read_and_the_unchanged_client_is_not(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    staged = generated_files(project)
    staged[f"{WIRE}/models.py"] += b"\n\nclass Extra:\n    pass\n"
    read = packages_read(monkeypatch)
    diffs = {diff.package: diff for diff in compare.diff_generated(project, staged, GENERATED_ROOTS)}
    assert read == ["e2b-local-api", "e2b-local-api"]
    assert diffs["e2b"] == compare.ApiDiff("e2b", (), ())


def test_a_link_in_an_unchanged_generated_folder_is_still_refused(project: Path) -> None:
    staged = generated_files(project)
    os.symlink("/etc/passwd", project / WIRE / "passwd.py")
    with pytest.raises(ToolError, match="is a symlink") as caught:
        compare.diff_generated(project, staged, GENERATED_ROOTS)
    assert caught.value.exit_code == EXIT_CANNOT_RUN


# --- additions: names and optional parameters --------------------------------------------------

ERROR_CODES = "packages/python-sdk/e2b/api/error_codes.py"
KILL = "packages/python-sdk/e2b/api/client/api/sandboxes/kill_sandbox.py"
NEW_CODES = ("TEAM_BLOCKED", "SNAPSHOT_NOT_FOUND", "VOLUME_IN_USE", "QUOTA_EXCEEDED", "NODE_DRAINING")


def test_error_code_constants_a_regeneration_adds_are_additions(project: Path) -> None:
    """The history's R37: five error codes documented, five constants generated; "No change" was wrong."""
    staged = generated_files(project)
    for code in NEW_CODES:
        staged[ERROR_CODES] += f'\n{code}_ERROR_CODE: Final = "{code.lower()}"\n"""Documented now."""\n'.encode()
    (diff,) = [d for d in compare.diff_generated(project, staged, GENERATED_ROOTS) if d.package == "e2b"]
    assert diff.breaks == ()
    assert sorted(diff.added) == sorted(f"e2b.api.error_codes.{code}_ERROR_CODE (attribute)" for code in NEW_CODES)
    assert diff.level == "minor"


def test_an_error_code_constant_a_regeneration_removes_is_a_break(project: Path) -> None:
    staged = generated_files(project)
    text = staged[ERROR_CODES].decode()
    staged[ERROR_CODES] = text.replace('RATE_LIMITED_ERROR_CODE: Final = "rate_limited"\n', "").encode()
    assert staged[ERROR_CODES].decode() != text  # the premise
    (diff,) = [d for d in compare.diff_generated(project, staged, GENERATED_ROOTS) if d.package == "e2b"]
    assert diff.breaks == ("e2b.api.error_codes.RATE_LIMITED_ERROR_CODE: attribute removed",)


def test_an_optional_parameter_each_function_gains_is_an_addition(project: Path) -> None:
    """The history's R40: an operation gains an optional body, in its four functions; "No change" was wrong."""
    staged = generated_files(project)
    signature_end = b"    client: AuthenticatedClient,\n)"
    assert staged[KILL].count(signature_end) == 4  # the premise: sync, sync_detailed and their async twins
    staged[KILL] = staged[KILL].replace(
        signature_end, b"    client: AuthenticatedClient,\n    body: dict[str, Any] | None = None,\n)"
    )
    (diff,) = [d for d in compare.diff_generated(project, staged, GENERATED_ROOTS) if d.package == "e2b"]
    module = "e2b.api.client.api.sandboxes.kill_sandbox"
    assert diff.breaks == ()
    assert sorted(diff.added) == [
        f"{module}.{function}(body) (optional parameter)"
        for function in ("asyncio", "asyncio_detailed", "sync", "sync_detailed")
    ]
    assert diff.level == "minor"
    assert f"- added: `{module}.sync(body) (optional parameter)`" in compare.render(diff)


SIGNATURE_CASES = [
    # (old parameters, new parameters, additions)
    ([("a", "positional or keyword", None)], [("a", "positional or keyword", None), ("b", "keyword-only", "1")], ["b"]),
    ([], [("kwargs", "variadic keyword", None)], ["kwargs"]),
    # A required parameter added is a break (signature_breaks), not an addition.
    ([], [("b", "keyword-only", None)], []),
    ([("a", "keyword-only", "1")], [("a", "keyword-only", "2")], []),
]


@pytest.mark.parametrize(("old", "new", "names"), SIGNATURE_CASES)
def test_signature_additions(old: list[Any], new: list[Any], names: list[str]) -> None:
    found = list(compare.signature_additions("m.f", old, new))
    assert found == [f"m.f({name}) (optional parameter)" for name in names]


# --- griffe's readings, remembered ------------------------------------------------------------


def test_a_tree_read_before_is_not_read_again_and_gives_the_same_diff(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    staged = generated_files(project)
    staged[f"{CLIENT_MODELS}/sandbox_note.py"] = b"class SandboxNote:\n    text: str\n"
    staged[f"{CLIENT_MODELS}/__init__.py"] += b"from .sandbox_note import SandboxNote\n"
    records = compare.api_records(Project(project))
    plain = compare.diff_generated(project, staged, GENERATED_ROOTS)
    read = packages_read(monkeypatch)

    first = compare.diff_generated(project, staged, GENERATED_ROOTS, records=records)
    monkeypatch.setattr(compare, "_swapped_copy", lambda *_: pytest.fail("copied the tree for a remembered side"))
    again = compare.diff_generated(project, staged, GENERATED_ROOTS, records=records)

    assert first == again == plain
    assert read == ["e2b", "e2b"]  # both sides once; the second diff read neither


def test_a_changed_file_is_read_again(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = next(p for p in list_distributions(project) if p.name == "e2b")
    records = compare.api_records(Project(project))
    read = packages_read(monkeypatch)
    before = compare.load_api(package, project / package.path, records=records)
    (project / CLIENT_MODELS / "sandbox_note.py").write_text("class SandboxNote:\n    text: str\n")
    after = compare.load_api(package, project / package.path, records=records)
    assert read == ["e2b", "e2b"]
    assert "e2b.api.client.models.sandbox_note" in after.keys() - before.keys()


def test_a_remembered_reading_that_is_not_one_is_read_again(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = next(p for p in list_distributions(project) if p.name == "e2b-local-api")
    records = compare.api_records(Project(project))
    expected = compare.load_api(package, project / package.path)
    read = packages_read(monkeypatch)
    digest = compare._files_digest(package, compare._package_files(project / package.path))
    values: list[object] = [
        {"a.b": ["class", [1], []]},
        {"a.b": ["function", [], [["x", "keyword-only"]]]},
        {"a": 1},
        [],
    ]
    for value in values:
        records.remember(digest, value)
        assert compare.load_api(package, project / package.path, records=records) == expected
    assert len(read) == len(values)


def test_a_link_is_refused_before_any_remembered_reading(project: Path) -> None:
    package = next(p for p in list_distributions(project) if p.name == "e2b-local-api")
    records = compare.api_records(Project(project))
    compare.load_api(package, project / package.path, records=records)
    os.symlink("/etc/passwd", project / WIRE / "passwd.py")
    with pytest.raises(ToolError, match="is a symlink"):
        compare.load_api(package, project / package.path, records=records)


def test_a_pth_file_in_a_package_folder_is_refused(project: Path) -> None:
    """griffe would follow it to folders outside the package, which no digest covers."""
    package = next(p for p in list_distributions(project) if p.name == "e2b")
    (project / package.path / "extra.pth").write_text("/tmp\n")
    with pytest.raises(ToolError, match=r"extra.pth in .* is a .pth file"):
        compare.load_api(package, project / package.path)


def test_a_package_in_the_working_directory_is_not_read_instead(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = next(p for p in list_distributions(project) if p.name == "e2b-local-api")
    expected = compare.load_api(package, project / package.path)
    (tmp_path / "elsewhere/e2b_local_api").mkdir(parents=True)
    (tmp_path / "elsewhere/e2b_local_api/__init__.py").write_text("def other(): ...\n")
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert compare.load_api(package, project / package.path) == expected


def test_a_file_name_that_is_not_utf_8_is_read_and_remembered(project: Path) -> None:
    package = next(p for p in list_distributions(project) if p.name == "e2b-local-api")
    (project / package.path / os.fsdecode(b"notes-\xff.md")).write_text("notes\n")
    records = compare.api_records(Project(project))
    assert compare.load_api(package, project / package.path, records=records)
    assert compare.load_api(package, project / package.path, records=records)
