"""The envd protos: bounds and the import fence before protoc, protoc's errors with file and line, Python names."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from codegen.envd.protos import name_problems, parse_protos, prescan, read_descriptors
from toolkit.errors import ToolError

ROOT = Path(__file__).resolve().parents[3]
PROCESS = "spec/envd/process/process.proto"
FILESYSTEM = "spec/envd/filesystem/filesystem.proto"


def synced() -> dict[str, bytes]:
    return {path: (ROOT / path).read_bytes() for path in (PROCESS, FILESYSTEM)}


def refused(protos: dict[str, bytes]) -> str:
    """The one problem, rendered: its first line names the file (and the line, when there is one)."""
    with pytest.raises(ToolError) as caught:
        parse_protos(protos)
    assert caught.value.exit_code == 2
    [problem] = caught.value.problems
    return problem.render()


@pytest.fixture
def no_protoc(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the fence refuses never reaches protoc."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("protoc ran")

    monkeypatch.setattr(subprocess, "Popen", refuse)


def test_the_synced_protos_parse_into_both_services() -> None:
    descriptors = read_descriptors(parse_protos(synced()))
    services = {f"{f.package}.{s.name}" for f in descriptors.file for s in f.service}
    assert services == {"process.Process", "filesystem.Filesystem"}
    assert "google/protobuf/timestamp.proto" in {f.name for f in descriptors.file}  # imports included


def test_a_syntax_error_names_the_file_and_line() -> None:
    protos = synced()
    protos[PROCESS] = protos[PROCESS].replace(b"message ListRequest {}", b"message ListRequest {", 1)
    said = refused(protos)
    first = said.splitlines()[0]
    assert first.startswith(f"{PROCESS}:"), said
    assert first.split(":")[1].isdigit(), said


def test_a_duplicate_field_number_names_the_file_and_line() -> None:
    protos = synced()
    protos[FILESYSTEM] = protos[FILESYSTEM].replace(b"bool is_symlink = 12;", b"bool is_symlink = 11;", 1)
    said = refused(protos)
    assert said.startswith(f"{FILESYSTEM}:"), said
    assert "11" in said.splitlines()[0]


@pytest.mark.parametrize(
    "named",
    ["/etc/passwd", "../../secret.proto", "process/../../../x.proto", "other/missing.proto", "google/x/y.proto"],
)
def test_an_import_outside_spec_envd_is_refused_before_protoc(no_protoc: None, named: str) -> None:
    protos = synced()
    protos[PROCESS] = protos[PROCESS].replace(b"package process;", f'package process;\nimport "{named}";'.encode())
    said = refused(protos)
    assert said.startswith(f"{PROCESS}:8:"), said
    assert "only the other envd protos" in said


def test_an_import_spelled_with_an_escape_is_refused(no_protoc: None) -> None:
    protos = synced()
    protos[PROCESS] = protos[PROCESS].replace(b"package process;", b'package process;\nimport "\\x2e./x.proto";')
    assert "only the other envd protos" in refused(protos)


def test_imports_of_another_envd_proto_and_a_well_known_type_pass_and_comments_are_not_imports() -> None:
    protos = synced()
    extra = b'// import "/etc/passwd";\n/* import "../x.proto"; */\nimport "filesystem/filesystem.proto";\n'
    protos[PROCESS] = protos[PROCESS].replace(b"package process;", b"package process;\n" + extra)
    assert prescan(PROCESS, protos[PROCESS], frozenset({"process/process.proto", "filesystem/filesystem.proto"})) == [
        "filesystem/filesystem.proto"
    ]
    read_descriptors(parse_protos(protos))  # protoc agrees (an unused import is only its warning)


def test_a_10000_message_proto_is_refused_within_seconds(no_protoc: None) -> None:
    body = b"".join(b"message M%d {}\n" % n for n in range(10_000))
    started = time.perf_counter()
    said = refused({PROCESS: b'syntax = "proto3";\npackage process;\n' + body})
    assert time.perf_counter() - started < 5
    assert said.startswith(f"{PROCESS}:"), said
    assert "more than 1,000 messages" in said


def test_a_64_deep_nested_proto_is_refused(no_protoc: None) -> None:
    nested = b"".join(b"message N%d {\n" % n for n in range(64)) + b"}\n" * 64
    said = refused({PROCESS: b'syntax = "proto3";\npackage process;\n' + nested})
    assert said.startswith(f"{PROCESS}:"), said
    assert "nests blocks more than 32 deep" in said


def test_a_proto_that_is_not_utf8_is_refused(no_protoc: None) -> None:
    assert "is not UTF-8" in refused({PROCESS: b'syntax = "proto3";\n\xff\n'})


@pytest.mark.parametrize(("old", "new"), [(b"service Process {", b"service class {"), (b"rpc List(", b"rpc def(")])
def test_a_service_or_rpc_named_by_a_python_keyword_is_refused(old: bytes, new: bytes) -> None:
    protos = synced()
    protos[PROCESS] = protos[PROCESS].replace(old, new, 1)
    descriptors = read_descriptors(parse_protos(protos))  # protoc accepts it
    [problem] = name_problems(descriptors, frozenset({"process/process.proto", "filesystem/filesystem.proto"}))
    assert problem.where == PROCESS
    assert "is not a Python identifier, or is a keyword" in problem.message


def test_protoc_text_is_printed_escaped() -> None:
    protos = synced()
    protos[PROCESS] = protos[PROCESS].replace(b"message ListRequest {}", b"message List\x1b[2JRequest {}", 1)
    said = refused(protos)
    assert "\x1b" not in said
