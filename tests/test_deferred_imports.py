"""codegen's and release's imports are at the top of their modules, but for the two kinds the rule allows.

The rule (docs/maintainers/design.md, "Deferred imports"): a command-line module imports a
command's module in that command's function; a module in DEFERRED, whose import a run may skip,
is imported in the function that uses it. Nothing else is imported inside a function.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("codegen", "release", "toolkit", "python_api")
COMMAND_LINES = ("codegen/cli.py", "release/cli.py")
DEFERRED = frozenset(
    {
        # Third-party imports that are a visible part of a run's time, needed by some runs only.
        "openapi_spec_validator.shortcuts",  # the validator: skipped when this machine's verdict stands
        "jsonschema_path",
        "ruff",  # the binary's path: only when something is formatted
        "importlib.metadata",  # tool versions, for step lines and cache keys
        "tomllib",  # pyproject.toml, read only when the settings are
        # codegen's own modules whose imports bring those (jinja2, the validator, griffe).
        "codegen.generation.overlays",
        "codegen.openapi.document",
        "python_api.compare",
        # What bump's report and Python API section need only when nothing remembers their answers.
        "codegen.api_changes.client_parser",  # openapi-python-client's parser
        "python_api.reader",  # griffe
        # What a verb imports only once it gets there: the pipeline (GitPython) after generate's generators
        # have started, so that they import themselves meanwhile; the check's steps, each as it reaches it.
        "codegen.pipeline",
        "codegen.generation.cache",
        "codegen.generation.inputs",
        "codegen.upstream.fetch",
        # The spec's own steps (PyYAML, the contract, the filter): not for a run that stops at the fetch.
        "codegen.contract",
        "codegen.openapi.error_codes",
        "codegen.openapi.operation_map",
        "codegen.openapi.sdk_filter",
        # The data plane's lane: protobuf and protoc, only for a run that gets past the fetch.
        "codegen.envd.lane",
    }
)
# What importing these must not load (generate starts its generators here; the command lines load
# their command only): the promise DEFERRED keeps.
ENTRY_POINTS = ("codegen.cli", "codegen.commands.generate", "release.cli")


def _function_imports(path: Path) -> list[tuple[int, str, str]]:
    """(line, the enclosing function, module) of every import inside a function."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for inner in ast.walk(node):
                if isinstance(inner, ast.ImportFrom) and inner.module:
                    found.append((inner.lineno, node.name, inner.module))
                elif isinstance(inner, ast.Import):
                    found += [(inner.lineno, node.name, alias.name) for alias in inner.names]
    return found


def _module_imports(path: Path) -> set[str]:
    """The modules the file imports at its top when it runs (not those under `if TYPE_CHECKING:`)."""
    found: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return found


def _files() -> list[Path]:
    return sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py"))


def test_an_import_inside_a_function_is_a_command_s_or_a_deferred_one() -> None:
    outside = []
    for path in _files():
        rel = path.relative_to(ROOT).as_posix()
        for line, function, module in _function_imports(path):
            if rel in COMMAND_LINES and function.startswith("cmd_"):
                continue
            if module not in DEFERRED:
                outside.append(f"{rel}:{line} ({function}): {module}")
    assert not outside, "import these at the top of the module, or add them to DEFERRED with why:\n" + "\n".join(
        outside
    )


def test_no_module_defers_what_it_imports_at_its_top_anyway() -> None:
    pointless = [
        f"{path.relative_to(ROOT)}:{line}: {module}"
        for path in _files()
        for line, _, module in _function_imports(path)
        if module in _module_imports(path)
    ]
    assert not pointless


def test_every_deferred_module_is_deferred_somewhere() -> None:
    used = {module for path in _files() for _, _, module in _function_imports(path)}
    assert DEFERRED <= used, sorted(DEFERRED - used)


def test_the_entry_points_load_none_of_the_deferred_modules() -> None:
    probe = (
        "import importlib, json, sys\n"
        f"for name in {list(ENTRY_POINTS)!r}:\n"
        "    importlib.import_module(name)\n"
        f"print(json.dumps(sorted(m for m in {sorted(DEFERRED)!r} if m in sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(ROOT)!r})\n" + probe],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert json.loads(done.stdout) == []


def test_the_rule_sees_an_import_it_does_not_allow(tmp_path: Path) -> None:
    module = tmp_path / "example.py"
    module.write_text("import os\n\ndef run():\n    import json\n    from codegen.pipeline import build\n")
    assert [(function, name) for _, function, name in _function_imports(module)] == [
        ("run", "json"),
        ("run", "codegen.pipeline"),
    ]
    assert {name for _, _, name in _function_imports(module)} - DEFERRED == {"json"}
