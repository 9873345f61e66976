"""The data-plane entries of spec/contract.yml: read apart from the control plane's, malformed ones named."""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.contract import parse_contract
from codegen.envd.contract import parse_data_plane
from toolkit.errors import ToolError

ROOT = Path(__file__).resolve().parents[3]
FILES = ("spec/envd/process/process.proto", "spec/envd/filesystem/filesystem.proto", "spec/envd/envd.yaml")


def test_the_contract_holds_both_services_and_the_envd_operations() -> None:
    contract = parse_data_plane((ROOT / "spec/contract.yml").read_bytes(), display_path="c.yml", envd_files=FILES)
    kinds = {entry.service: dict(entry.rpcs) for entry in contract.services}
    assert kinds["process.Process"]["Start"] == "server-streaming"
    assert kinds["process.Process"]["StreamInput"] == "client-streaming"
    assert kinds["filesystem.Filesystem"]["WatchDir"] == "server-streaming"
    assert len(kinds["process.Process"]) == 8 and len(kinds["filesystem.Filesystem"]) == 9
    pointers = [entry.pointer for _, entry in contract.http]
    assert pointers == ["/paths/~1files/get", "/paths/~1files/post", "/paths/~1health/get"]


def test_the_control_plane_reader_skips_the_data_plane_entries() -> None:
    entries = parse_contract((ROOT / "spec/contract.yml").read_bytes(), display_path="spec/contract.yml")
    assert all(not entry.pointer.startswith("/paths/~1files") for entry in entries)


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ("- service: Process\n  rpcs: {Start: unary}\n  why: w\n", "service must be package.Service"),
        ("- service: process.Process\n  rpcs: {Start: streaming}\n  why: w\n", "is not one of unary"),
        ("- service: process.Process\n  rpcs: {Start: unary}\n", "needs a `why`"),
        ("- service: process.Process\n  rpcs: {Start: unary}\n  why: w\n  level: warning\n", "level error"),
        ("- spec: spec/envd/process/process.proto\n  pointer: /a\n  exists: true\n  why: w\n", "envd's YAML file"),
        ("- spec: /etc/passwd\n  pointer: /a\n  exists: true\n  why: w\n", "envd's YAML file"),
    ],
)
def test_a_malformed_entry_is_named_with_its_line(entry: str, said: str) -> None:
    text = "# a contract\n" + entry
    with pytest.raises(ToolError) as caught:
        parse_data_plane(text.encode(), display_path="spec/contract.yml", envd_files=FILES)
    [problem] = caught.value.problems
    assert problem.where == "spec/contract.yml:2 (entry 1)"
    assert said in problem.message
