"""bump's section on the envd files: the files, the protos and envd.yaml graded, what SDK users lose or gain."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from codegen.api_changes.envd_files import (
    HTTP_TITLE,
    PROTOS_TITLE,
    TITLE,
    EnvdReport,
    compare_envd,
    envd_fragment_lines,
    render_envd_section,
)
from codegen.api_changes.report import Level
from codegen.envd.synced import SyncedFile
from toolkit.errors import ToolError

ROOT = Path(__file__).resolve().parents[3]
PROCESS = "spec/envd/process/process.proto"
FILESYSTEM = "spec/envd/filesystem/filesystem.proto"
HTTP = "spec/envd/envd.yaml"
ALL = (PROCESS, FILESYSTEM, HTTP)


def tracked(path: str) -> bytes:
    return (ROOT / path).read_bytes()


def synced(path: str, data: bytes | None = None) -> SyncedFile:
    return SyncedFile(path, tracked(path) if data is None else data, "1" * 40)


def edited(path: str, old: bytes, new: bytes) -> bytes:
    data = tracked(path)
    assert data.count(old) == 1, old
    return data.replace(old, new)


def compare(old: Mapping[str, bytes | None], new: tuple[SyncedFile, ...]) -> EnvdReport:
    report = compare_envd(old, new, old_ref="runtime@0ld0000")
    assert report is not None
    return report


def section(report: EnvdReport, http_level: Level = "none") -> str:
    return render_envd_section(report, new_ref="runtime@abc1234", http_level=http_level)


def test_nothing_changed_is_no_section() -> None:
    assert compare_envd({p: tracked(p) for p in ALL}, tuple(map(synced, ALL)), old_ref="runtime@0ld0000") is None


def test_protos_a_pin_adds_are_what_sdk_users_gain() -> None:
    report = compare({PROCESS: None}, (synced(PROCESS),))
    assert report.level == "minor"
    text = section(report)
    assert text.startswith(TITLE)
    assert "- added `spec/envd/process/process.proto`: service `process.Process` with 8 RPC(s): `Start`," in text
    assert PROTOS_TITLE in text and HTTP_TITLE not in text
    assert "#### What SDK users gain (minor)\n" in text
    assert "- service added: `process.Process`" in text
    assert "The data plane raises the fragment's type to at least `feature`." in text


def test_a_removed_field_is_what_sdk_users_lose_named_with_its_number() -> None:
    old = {p: tracked(p) for p in ALL}
    new = edited(FILESYSTEM, b"  bool is_symlink = 12;\n", b"")
    report = compare(old, (synced(PROCESS), synced(FILESYSTEM, new), synced(HTTP)))
    assert report.level == "major"
    text = section(report, http_level="major")
    assert "Semver: **major** — forced by: field removed `filesystem.EntryInfo.is_symlink (12)`" in text
    assert "#### What SDK users lose (major)\n- field removed: `filesystem.EntryInfo.is_symlink (12)`\n" in text
    assert "- changed `spec/envd/filesystem/filesystem.proto`" in text
    assert "- changed `spec/envd/process/process.proto`" not in text
    assert "raises the fragment's type" not in text  # the control plane's level is as high
    assert envd_fragment_lines(report) == ["- envd, field removed: `filesystem.EntryInfo.is_symlink (12)`"]


def test_a_comment_is_no_change_on_the_wire() -> None:
    field = b"  bool is_symlink = 12;\n"
    new = edited(FILESYSTEM, field, b"  // Whether the entry is a link.\n" + field)
    report = compare({FILESYSTEM: tracked(FILESYSTEM)}, (synced(FILESYSTEM, new),))
    assert report.level == "none" and report.protos.changes == ()
    assert "No change on the wire: comments, layout or declaration order only." in section(report)
    assert envd_fragment_lines(report) == []


def test_envd_yaml_goes_through_the_openapi_comparison() -> None:
    new = edited(HTTP, b"summary: Whether envd is up", b"summary: Whether envd answers")
    report = compare({HTTP: tracked(HTTP)}, (synced(HTTP, new),))
    assert report.level == "patch" and report.http.description_changes == 1
    assert envd_fragment_lines(report) == ["- envd.yaml, 1 description-only change"]
    assert HTTP_TITLE in section(report) and PROTOS_TITLE not in section(report)


def test_an_added_envd_yaml_grades_public_operations_and_lists_the_orchestrator_s_as_upstream_only() -> None:
    report = compare({HTTP: None}, (synced(HTTP),))
    assert report.level == "minor"
    public = {c.location for c in report.http.changes if c.level == "minor"}
    assert {"GET /files", "POST /files", "GET /health"} <= public
    internal = {c.location for c in report.http.changes if c.level == "none"}
    assert "POST /init" in internal and not internal & public
    text = section(report)
    assert "#### Upstream only (no SDK change)\n" in text
    assert "x-internal operation of envd.yaml is the orchestrator's" in text  # the note the lines refer to


def test_a_change_to_an_orchestrator_only_operation_is_upstream_only() -> None:
    data = tracked(HTTP)
    start = data.index(b"  /init:")
    assert b"x-internal: true" in data[start : start + 400]
    new = data[:start] + data[data.index(b"\n  /", start + 1) + 1 :]  # /init removed
    report = compare({HTTP: data}, (synced(HTTP, new),))
    found = {(c.level, c.kind, c.location) for c in report.http.changes}
    # With it go the models only it used: each upstream only too, since the SDK's operations keep theirs.
    assert ("none", "operation removed", "POST /init") in found and ("none", "model removed", "EnvVars") in found
    assert {level for level, _, _ in found} == {"none"} and report.level == "none"


def test_a_removed_file_is_listed() -> None:
    report = compare({PROCESS: tracked(PROCESS), "spec/envd/old.proto": b'syntax = "proto3";\n'}, (synced(PROCESS),))
    assert "- removed `spec/envd/old.proto`" in section(report)


def test_protos_the_old_pin_holds_that_no_longer_parse_are_said_to_be_the_old_pin_s() -> None:
    with pytest.raises(ToolError) as caught:
        compare_envd({PROCESS: b"syntax = 'proto3';\nmessage {\n"}, (synced(PROCESS),), old_ref="runtime@0ld0000")
    first, second = caught.value.problems
    assert "at the old pin runtime@0ld0000 no longer parse" in first.message
    assert second.where is not None and second.where.startswith(f"{PROCESS}:2")


def test_names_from_the_runtime_reach_the_markdown_escaped_as_code_spans() -> None:
    hostile = b'openapi: 3.0.0\ninfo: {title: t, version: "1"}\npaths:\n  "/x`<img src=x onerror=alert(1)>\\u202e":\n'
    hostile += b"    get:\n      responses:\n        '200': {description: ok}\n"
    text = section(compare({}, (synced(HTTP, hostile),)))
    assert "\u202e" not in text
    assert "``GET /x`<img src=x onerror=alert(1)>\\u202e``" in text  # a code span, the override visible
