"""envd's generation: the pinned protoc and its plugins, for real, and what a run says when they fail."""

from __future__ import annotations

import os
import sys
import time
import tokenize
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from codegen.generation import protoc
from codegen.generation.generators import PROTOC, Generators, private_scratch
from codegen.generation.stage import ENVD_HEADER, HEADER, header_for
from tests.codegen.conftest import Result, tree_digest
from toolkit.errors import ToolError
from toolkit.paths import ENVD_CLIENT_DIR, ENVD_DIR, ENVD_SERVER_DIR, GENERATED_ROOTS

ROOT = Path(__file__).resolve().parents[3]
PROTOS = protoc.protos_of((p.relative_to(ROOT).as_posix(), p.read_bytes()) for p in (ROOT / ENVD_DIR).rglob("*.proto"))
MODULES = {
    "__init__.py",
    "process/__init__.py",
    "process/process_pb.py",
    "process/process_connect.py",
    "filesystem/__init__.py",
    "filesystem/filesystem_pb.py",
    "filesystem/filesystem_connect.py",
}


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Path]:
    with private_scratch(tmp_path / "codegen") as folder:
        yield folder


def _protoc(scratch: Path, seconds: float = 120) -> tuple[Generators, Path]:
    generators = Generators(scratch, seconds=seconds)
    args, out = protoc.protoc_args(PROTOS, scratch)
    generators.start_jobs([(PROTOC, args)])
    return generators, out


def test_the_protos_are_generated_into_the_released_sdks_module_paths(scratch: Path) -> None:
    assert set(PROTOS) == {"process/process.proto", "filesystem/filesystem.proto"}
    generators, out = _protoc(scratch)
    try:
        generators.wait(PROTOC)
    finally:
        generators.close()
    written = {p.relative_to(out).as_posix() for p in out.rglob("*.py")}
    assert written == MODULES
    connect = (out / "process/process_connect.py").read_text()
    # One generation serves both sides: the SDK's clients and the local server's applications.
    for name in ("class ProcessClient(", "class ProcessClientSync(", "class ProcessASGIApplication("):
        assert name in connect
    assert "from . import process_pb" in connect  # relative: the same modules work under either package
    tree = scratch / "tree"
    protoc.place(out, tree)
    for target in (ENVD_CLIENT_DIR, ENVD_SERVER_DIR):
        assert {p.relative_to(tree / target).as_posix() for p in (tree / target).rglob("*.py")} == MODULES


def test_the_envd_folders_are_generated_roots_with_their_own_header() -> None:
    assert ENVD_CLIENT_DIR in GENERATED_ROOTS and ENVD_SERVER_DIR.startswith(tuple(f"{r}/" for r in GENERATED_ROOTS))
    assert header_for(f"{ENVD_CLIENT_DIR}/process/process_pb.py") == ENVD_HEADER
    assert header_for(f"{ENVD_SERVER_DIR}/__init__.py") == ENVD_HEADER
    assert header_for("packages/local-api/e2b_local_api/wire/models.py") == HEADER


def test_the_plugins_run_isolated_by_this_interpreter(scratch: Path) -> None:
    scripts = protoc.plugin_scripts(scratch)
    assert set(scripts) == {"protoc-gen-py", "protoc-gen-connectrpc"}
    for path in scripts.values():
        assert path.read_text().splitlines()[0] == f"#!{sys.executable} -I"
        assert os.access(path, os.X_OK) and path.parent == scratch / "bin"


def _stand_in_plugin(monkeypatch: pytest.MonkeyPatch, body: str) -> None:
    """protoc-gen-py replaced by a shell script (`body`); protoc-gen-connectrpc stays the real one."""
    real = protoc.plugin_scripts

    def scripts(scratch: Path) -> dict[str, Path]:
        made = real(scratch)
        made["protoc-gen-py"].write_text(f"#!/bin/sh\n{body}\n")
        return made

    monkeypatch.setattr(protoc, "plugin_scripts", scripts)


def test_a_plugin_past_the_limit_is_stopped_in_one_line_naming_protoc(
    scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _stand_in_plugin(monkeypatch, "exec sleep 600")
    started = time.monotonic()
    generators, _ = _protoc(scratch, seconds=1)
    try:
        with pytest.raises(ToolError) as caught:
            generators.wait(PROTOC)
    finally:
        generators.close()
    assert time.monotonic() - started < 60
    assert [p.render() for p in caught.value.problems] == [
        "protoc ran past its 1 s limit and was stopped, with every process it started "
        "(E2B_CODEGEN_TOOL_SECONDS sets the limit)"
    ]


def test_a_failing_plugin_stops_the_run_in_one_line_and_nothing_is_written(
    project: Path, run: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    _stand_in_plugin(monkeypatch, "echo 'the plugin broke' >&2; exit 3")
    before = tree_digest(project)
    result = run(project, "generate")
    assert result.code == 2, result.text
    said = [line for line in result.err.splitlines() if "protoc" in line and "failed" in line]
    assert len(said) == 1, result.text
    assert said[0].startswith("codegen: error: protoc failed (exit 1)") and "protoc-gen-py" in said[0], result.text
    assert tree_digest(project) == before


# Comments that try to close the docstring they become, in each quoting (read from lines: no literal to close).
HOSTILE = "\n".join(
    [
        'syntax = "proto3";',
        "package hostile;",
        '// Closes the docstring """ + __import__("os").system(pwned) + """ \\',
        "service Hostile {",
        '  // """',
        "  // import os; os.system(pwned)",
        "  // ''' \\\"\"\" pwned",
        "  rpc Do(Message) returns (Message);",
        "}",
        '// field """ pwned """',
        "message Message {",
        '  string a = 1; // trailing """ pwned',
        "}",
        "",
    ]
).encode()


def test_proto_comments_reach_the_generated_code_only_inside_string_literals(scratch: Path) -> None:
    """The plugins make docstrings of comments: whatever a comment holds stays text, never code."""
    generators = Generators(scratch)
    args, out = protoc.protoc_args({"hostile/hostile.proto": HOSTILE}, scratch)
    generators.start_jobs([(PROTOC, args)])
    try:
        generators.wait(PROTOC)
    finally:
        generators.close()
    modules = sorted(out.rglob("*_pb.py")) + sorted(out.rglob("*_connect.py"))
    assert [p.name for p in modules] == ["hostile_pb.py", "hostile_connect.py"]
    seen = 0
    for path in modules:
        with path.open("rb") as source:
            for token in tokenize.tokenize(source.readline):
                if "pwned" in token.string:
                    assert token.type == tokenize.STRING, f"{path.name}:{token.start[0]}: {token.string!r}"
                    seen += 1
    assert seen > 0  # the comments did reach the code: as text
