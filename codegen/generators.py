"""Run the code generators on the filtered spec, in a scratch folder, and collect their output.

Both generators are run as subprocesses of this interpreter, so that the
versions pinned in requirements/codegen.txt are the ones that run.  Their
messages are shown as they wrote them when they fail.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from codegen.config import SPEC
from codegen.errors import CodegenError, Problem

CLIENT_CONFIG = Path(__file__).with_name("openapi_python_client.yml")


def _start(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _finish(tool: str, process: subprocess.Popen[str]) -> None:
    output, _ = process.communicate()
    if process.returncode != 0:
        raise CodegenError(tool_failure(tool, process.returncode, output))


# Lines that frame a tool's message rather than say what went wrong.
_NOISE = re.compile(
    r"^(Generating |Warning\(s\) encountered|If you believe|Traceback |File \"|During handling|The above exception"
    r"|[\[\]{}\"^~]|\d+ files? (reformatted|left unchanged))"
)
_OBJECT_REPR = re.compile(r"\s*<[\w.]+ object at 0x[0-9a-fA-F]+>")
_OPERATION = re.compile(r"^(?:WARNING|ERROR) parsing (\w+) (\S+) within \S+")


def tool_failure(tool: str, exit_code: int, output: str) -> Problem:
    """One or two lines: the tool, its last meaningful line, and the operation or file it names."""
    where = None
    message = ""
    for raw in output.splitlines():
        line = _OBJECT_REPR.sub("", raw).strip()
        if not line or _NOISE.match(line):
            continue
        operation = _OPERATION.match(line)
        if operation:
            where = f"{SPEC} ({operation.group(1)} {operation.group(2)})"
            continue
        message = line.removeprefix("error: ")
    if not message:
        message = f"exited {exit_code} without saying why"
    return Problem(f"{tool} failed (exit {exit_code}): {message}", where=where)


def check_syntax(folder: Path) -> None:
    """Every generated module must parse; said with its file and line, before ruff would say less."""
    for path in sorted(folder.rglob("*.py")):
        try:
            ast.parse(path.read_bytes(), filename=str(path))
        except SyntaxError as error:
            rel = path.relative_to(folder).as_posix().removeprefix("./")
            raise CodegenError(
                Problem(
                    f"generated code does not parse: {error.msg}",
                    where=f"{rel}:{error.lineno}",
                    remedy="fix the template or the pipeline that wrote it",
                )
            ) from None


def _run(tool: str, args: list[str], cwd: Path) -> None:
    _finish(tool, _start(args, cwd))


def _run_together(jobs: list[tuple[str, list[str]]], cwd: Path) -> None:
    """The generators are independent and single-threaded: run them side by side."""
    started = [(tool, _start(args, cwd)) for tool, args in jobs]
    try:
        for tool, process in started:
            _finish(tool, process)
    finally:
        for _, process in started:
            if process.poll() is None:
                process.kill()
                process.wait()


def write_filtered_spec(spec: Mapping[str, Any], scratch: Path) -> Path:
    path = scratch / "openapi.filtered.json"
    path.write_text(json.dumps(spec, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def client_args(spec_path: Path, out: Path, templates: Path | None) -> list[str]:
    """openapi-python-client, package only (--meta none)."""
    args = [
        "openapi_python_client",
        "generate",
        "--path",
        str(spec_path),
        "--meta",
        "none",
        "--config",
        str(CLIENT_CONFIG),
        "--output-path",
        str(out),
        "--fail-on-warning",
    ]
    if templates is not None and templates.is_dir() and any(templates.iterdir()):
        args += ["--custom-template-path", str(templates)]
    return args


def wire_model_args(spec_path: Path, out: Path) -> list[str]:
    """datamodel-code-generator: pydantic v2 models of the wire schemas, one module."""
    return [
        "datamodel_code_generator",
        "--input",
        str(spec_path),
        "--input-file-type",
        "openapi",
        "--output",
        str(out),
        "--output-model-type",
        "pydantic_v2.BaseModel",
        "--target-python-version",
        "3.10",
        "--disable-timestamp",
        "--use-annotated",
        "--field-constraints",
        "--use-standard-collections",
        "--use-union-operator",
        "--use-double-quotes",
        "--use-schema-description",
        "--custom-file-header",
        "# wire models",
    ]


def generate(spec_path: Path, scratch: Path, templates: Path | None) -> tuple[Path, Path]:
    """Run both generators on the filtered spec; return the client package and the models module."""
    client, wire = scratch / "client", scratch / "wire_models.py"
    _run_together(
        [
            ("openapi-python-client", client_args(spec_path, client, templates)),
            ("datamodel-code-generator", wire_model_args(spec_path, wire)),
        ],
        scratch,
    )
    return client, wire


def format_python(folder: Path) -> None:
    """Ruff (pinned) with fixed settings, so the output does not follow the repo's lint config."""
    check_syntax(folder)
    common = ["--isolated", "--no-cache", "--target-version", "py310", "--line-length", "100"]
    _run(
        "ruff",
        ["ruff", "check", "--fix-only", "--quiet", *common, "--select", "I,F401", "."],
        folder,
    )
    _run("ruff", ["ruff", "format", *common, "."], folder)  # not --quiet: it would hide ruff's errors too
