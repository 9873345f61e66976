"""bump's report on the envd files: which the new pin adds, removes or changes, and what an added one declares.

How it works, and why: docs/maintainers/design.md, "codegen/api_changes/envd_files.py".
"""

from __future__ import annotations

from collections.abc import Mapping

from codegen.api_changes.report import code_span
from codegen.envd.protos import tokens
from codegen.envd.synced import SyncedFile
from codegen.openapi.plain_yaml import load_yaml
from toolkit.errors import ToolError
from toolkit.printable import printable

TITLE = "## Data plane (envd)"
_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
_SHOWN = 12  # names listed per file; the rest are counted


def render_envd_section(old: Mapping[str, str | None], new: tuple[SyncedFile, ...], *, new_ref: str) -> str | None:
    """Markdown for the report; None when no envd file changed.  `old`: each path's blob id at the old pin.

    Names come from the runtime's files: escaped and shown as code spans, as the API report shows them.
    The grading of what changed inside a file is the proto and OpenAPI comparisons' (issue 41, point 5).
    """
    lines: list[str] = []
    for file in new:
        before = old.get(file.path)
        if before == file.blob_id:
            continue
        verb = "added" if before is None else "changed"
        lines.append(f"- {verb} {code_span(file.path)}: {_declares(file)}")
    kept = {f.path for f in new}
    lines += [f"- removed {code_span(path)}" for path, blob in old.items() if blob and path not in kept]
    if not lines:
        return None
    return "\n".join(
        [
            TITLE,
            "",
            f"Synced from {new_ref} with the control plane ([tool.codegen] envd-files):",
            "",
            *lines,
            "",
            "No envd code is generated from them yet, so no SDK module changes with them.",
        ]
    )


def _declares(file: SyncedFile) -> str:
    text = file.data.decode("utf-8", "replace")
    if file.path.endswith(".proto"):
        return _proto_declares(text)
    return _http_declares(file)


def _proto_declares(text: str) -> str:
    """Each `package.Service` and its RPCs, read from the tokens (the lane has passed the file through protoc)."""
    found = [value for _, value, _ in tokens(text)]
    package = next((found[i + 1] for i, value in enumerate(found[:-1]) if value == "package"), "")
    services: list[tuple[str, list[str]]] = []
    for index, value in enumerate(found[:-1]):
        if value == "service":
            services.append((f"{package}.{found[index + 1]}" if package else found[index + 1], []))
        elif value == "rpc" and services:
            services[-1][1].append(found[index + 1])
    said = []
    for service, rpcs in services:
        shown = ", ".join(code_span(printable(rpc)) for rpc in rpcs[:_SHOWN])
        more = f" and {len(rpcs) - _SHOWN} more" if len(rpcs) > _SHOWN else ""
        said.append(f"service {code_span(printable(service))} with {len(rpcs)} RPC(s): {shown}{more}")
    return "; ".join(said) or "no service"


def _http_declares(file: SyncedFile) -> str:
    """The operations of envd's HTTP API, the orchestrator's own (`x-internal`) counted apart."""
    try:
        data = load_yaml(file.data, display_path=file.path).data
    except ToolError:
        return "not readable as YAML"  # the lane has refused it before any report is written
    paths = data.get("paths") if isinstance(data, dict) else None
    public: list[str] = []
    internal = 0
    for path, item in (paths or {}).items():
        for method in _METHODS:
            operation = item.get(method) if isinstance(item, dict) else None
            if isinstance(operation, dict):
                if operation.get("x-internal") is True:
                    internal += 1
                else:
                    public.append(f"{method.upper()} {path}")
    shown = ", ".join(code_span(printable(p)) for p in public[:_SHOWN])
    more = f" and {len(public) - _SHOWN} more" if len(public) > _SHOWN else ""
    return f"envd's HTTP API, {len(public)} operation(s): {shown}{more}; {internal} orchestrator-only (x-internal)"
