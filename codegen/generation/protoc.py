"""envd's generation: the synced protos through the pinned protoc and its two plugins, into both packages.

How it works, and why: docs/maintainers/design.md, "codegen/generation/protoc.py".
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from toolkit.errors import Problem, ToolError
from toolkit.paths import ENVD_CLIENT_DIR, ENVD_DIR, ENVD_SERVER_DIR

# The plugins protoc runs, by the name protoc knows each by, and the module whose `main` it is.
PLUGINS = {"protoc-gen-py": "protoc_gen_py", "protoc-gen-connectrpc": "protoc_gen_connectrpc"}
# In the generators' scratch folder: the protos as synced (protoc's one import root besides the
# well-known types), and the folder both plugins write into.
STAGED_PROTOS = "envd-protos"
OUTPUT = "envd"
# Where the one output goes: the SDK's client side, and the local server's, the same modules.
TARGETS = (ENVD_CLIENT_DIR, ENVD_SERVER_DIR)


def protos_of(synced: Iterable[tuple[str, bytes]]) -> dict[str, bytes]:
    """The synced protos by their path under spec/envd/ (what protoc's -I makes of them), sorted."""
    prefix = ENVD_DIR + "/"
    return {path.removeprefix(prefix): data for path, data in sorted(synced) if path.endswith(".proto")}


@functools.cache
def well_known_types() -> str:
    """The folder of the well-known types bundled with the pinned grpcio-tools (its protoc's other -I).

    Found, not imported: grpc_tools runs in protoc's own process only.
    """
    spec = importlib.util.find_spec("grpc_tools")
    if spec is None or not spec.submodule_search_locations:
        missing = "grpcio-tools is not installed: install requirements/codegen.txt (`nox -s codegen` does)"
        raise ToolError(Problem(missing))
    return os.path.join(spec.submodule_search_locations[0], "_proto")


def plugin_scripts(scratch: Path) -> dict[str, Path]:
    """Each plugin as an executable in the scratch folder's bin/: this interpreter, isolated (-I), runs its `main`.

    Not the environment's console scripts: their interpreter reads PYTHON* variables and the cwd.
    """
    folder = scratch / "bin"
    folder.mkdir(mode=0o700, exist_ok=True)
    scripts = {}
    for name, module in PLUGINS.items():
        path = folder / name
        path.write_text(f"#!{sys.executable} -I\nimport sys\nfrom {module} import main\nsys.exit(main())\n")
        path.chmod(0o700)
        scripts[name] = path
    return scripts


def stage_protos(protos: Mapping[str, bytes], scratch: Path) -> Path:
    """The protos written under the scratch folder, at their paths under spec/envd/; the folder protoc reads."""
    root = scratch / STAGED_PROTOS
    if root.exists():
        shutil.rmtree(root)
    for rel, data in protos.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return root


def protoc_args(protos: Mapping[str, bytes], scratch: Path) -> tuple[list[str], Path]:
    """protoc's arguments (`python -m` form) for the staged protos, and the folder both plugins write into.

    The folder exists and is empty: protoc writes into an existing folder only.
    """
    include = stage_protos(protos, scratch)
    out = scratch / OUTPUT
    if out.exists():
        shutil.rmtree(out)
    out.mkdir()
    plugins = plugin_scripts(scratch)
    return [
        "grpc_tools.protoc",
        f"-I{include}",
        f"-I{well_known_types()}",
        *(f"--plugin={name}={path}" for name, path in plugins.items()),
        f"--py_out={out}",
        f"--connectrpc_out={out}",
        *protos,
    ], out


def place(out: Path, tree: Path) -> None:
    """The plugins' output, copied into the staged tree under each target (the SDK's and the server's)."""
    for target in TARGETS:
        shutil.copytree(out, tree / target, dirs_exist_ok=True)
