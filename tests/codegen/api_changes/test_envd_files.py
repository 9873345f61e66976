"""bump's section on the envd files: added, changed, removed, what an added file declares; names escaped."""

from __future__ import annotations

from pathlib import Path

from codegen.api_changes.envd_files import TITLE, render_envd_section
from codegen.envd.synced import SyncedFile

ROOT = Path(__file__).resolve().parents[3]
PROCESS = "spec/envd/process/process.proto"
HTTP = "spec/envd/envd.yaml"


def synced(path: str, data: bytes | None = None, blob: str = "1" * 40) -> SyncedFile:
    return SyncedFile(path, (ROOT / path).read_bytes() if data is None else data, blob)


def test_nothing_changed_is_no_section() -> None:
    assert render_envd_section({PROCESS: "1" * 40}, (synced(PROCESS),), new_ref="runtime@abc1234") is None


def test_an_added_proto_lists_its_service_and_rpcs() -> None:
    section = render_envd_section({PROCESS: None}, (synced(PROCESS),), new_ref="runtime@abc1234")
    assert section is not None and section.startswith(TITLE)
    assert "- added `spec/envd/process/process.proto`: service `process.Process` with 8 RPC(s): `Start`," in section


def test_an_added_envd_yaml_lists_its_public_operations_and_counts_the_internal_ones() -> None:
    section = render_envd_section({}, (synced(HTTP),), new_ref="runtime@abc1234")
    assert section is not None
    assert "`GET /files`, `POST /files`" in section
    assert "6 orchestrator-only (x-internal)" in section


def test_changed_and_removed_files() -> None:
    section = render_envd_section(
        {PROCESS: "2" * 40, "spec/envd/old.proto": "3" * 40}, (synced(PROCESS),), new_ref="runtime@abc1234"
    )
    assert section is not None
    assert "- changed `spec/envd/process/process.proto`" in section
    assert "- removed `spec/envd/old.proto`" in section


def test_names_from_the_runtime_reach_the_markdown_escaped_as_code_spans() -> None:
    hostile = b'openapi: 3.0.0\npaths:\n  "/x`<img src=x onerror=alert(1)>\\u202e":\n    get: {}\n'
    section = render_envd_section({}, (synced(HTTP, hostile),), new_ref="runtime@abc1234")
    assert section is not None
    assert "\u202e" not in section
    assert "``GET /x`<img src=x onerror=alert(1)>\\u202e``" in section  # a code span, the override visible
