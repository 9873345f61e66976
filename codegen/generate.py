"""Run the code generators on the filtered spec, in a scratch folder, and collect their output.

Both generators are run as subprocesses of this interpreter, so that the
versions pinned in requirements/codegen.txt are the ones that run.  Their
messages are shown as they wrote them when they fail.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from codegen.errors import CodegenError, Problem

CLIENT_CONFIG = Path(__file__).with_name("openapi_python_client.yml")


def _run(tool: str, args: list[str], cwd: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        output = (result.stdout + result.stderr).strip()
        raise CodegenError(Problem(f"{tool} failed (exit {result.returncode}):\n{output}"))


def write_filtered_spec(spec: Mapping[str, Any], scratch: Path) -> Path:
    path = scratch / "openapi.filtered.json"
    path.write_text(json.dumps(spec, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def generate_client(spec_path: Path, scratch: Path, templates: Path | None) -> Path:
    """openapi-python-client, package only (--meta none): returns the package folder."""
    out = scratch / "client"
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
    _run("openapi-python-client", args, scratch)
    return out


def generate_wire_models(spec_path: Path, scratch: Path) -> Path:
    """datamodel-code-generator: pydantic v2 models of the wire schemas, one module."""
    out = scratch / "wire_models.py"
    _run(
        "datamodel-code-generator",
        [
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
        ],
        scratch,
    )
    return out


def format_python(folder: Path) -> None:
    """Ruff (pinned) with fixed settings, so the output does not follow the repo's lint config."""
    common = ["--isolated", "--no-cache", "--target-version", "py310", "--line-length", "100"]
    _run("ruff", ["ruff", "check", "--fix-only", "--quiet", *common, "--select", "I,F401", "."], folder)
    _run("ruff", ["ruff", "format", "--quiet", *common, "."], folder)
