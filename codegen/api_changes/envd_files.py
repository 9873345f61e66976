"""bump's report on the envd files: which the new pin adds, removes or changes, and what that changes for SDK users.

The protos are compared as Connect's JSON codec sees them (`protos`), envd.yaml by the control
plane's OpenAPI comparison, its orchestrator-only (`x-internal`) operations as upstream only.
How it works, and why: docs/maintainers/design.md, "codegen/api_changes/envd_files.py".
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from codegen.api_changes.compare import compare_specs
from codegen.api_changes.protos import ProtoSchema, compare_protos, index_protos
from codegen.api_changes.report import (
    LEVELS,
    ApiChangeReport,
    Level,
    code_span,
    fragment_lines,
    render_notes,
    render_sections,
    semver_line,
)
from codegen.api_changes.rules import WHY_ORCHESTRATOR_ONLY
from codegen.envd.protos import parse_protos, read_descriptors, tokens
from codegen.envd.synced import SyncedFile
from codegen.openapi.document import read_spec, validation_problems
from codegen.openapi.operations import HTTP_METHODS
from codegen.openapi.plain_yaml import load_yaml
from codegen.openapi.sdk_filter import _remove_unused_components  # the SDK filter's own pruning, not redone here
from toolkit.changelog import BUMP_TYPES
from toolkit.errors import Problem, ToolError
from toolkit.paths import ENVD_DIR
from toolkit.printable import printable

if TYPE_CHECKING:
    from toolkit.records import Records

TITLE = "## Data plane (envd)"
PROTOS_TITLE = "### Connect services (the protos, at buf's WIRE_JSON level)"
HTTP_TITLE = "### HTTP API (envd.yaml)"
_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
_SHOWN = 12  # names listed per file; the rest are counted
# What a change at each level means to someone who calls envd through the SDK.
_TITLES: tuple[tuple[Level, str], ...] = (
    ("major", "What SDK users lose (major)"),
    ("minor", "What SDK users gain (minor)"),
    ("patch", "Other (patch)"),
    ("none", "Upstream only (no SDK change)"),
)


@dataclass(frozen=True)
class EnvdReport:
    """The envd files a bump changes, and the graded changes of the protos and of envd.yaml."""

    files: tuple[str, ...]  # the section's lines: each file added, changed or removed
    protos: ApiChangeReport
    http: ApiChangeReport
    protos_changed: bool
    http_changed: bool

    @property
    def level(self) -> Level:
        return max(self.protos.level, self.http.level, key=LEVELS.index)


def compare_envd(
    old: Mapping[str, bytes | None],
    new: tuple[SyncedFile, ...],
    *,
    old_ref: str,
    records: Records | None = None,
) -> EnvdReport | None:
    """The envd files at the old pin (path -> bytes, None: absent) against the new pin's; None when none changed.

    Both sides' protos go through `parse_protos`, the envd lane's own: its bounds, import fence and
    timeout, before protoc reads them (bump compares before the lane runs, so that the report can
    explain what the lane's contract then refuses).  envd.yaml is read with the control plane's bounds.
    """
    files: list[str] = []
    for file in new:
        before = old.get(file.path)
        if before != file.data:
            verb = "added" if before is None else "changed"
            files.append(f"- {verb} {code_span(file.path)}: {_declares(file)}")
    kept = {f.path for f in new}
    files += [f"- removed {code_span(path)}" for path, data in old.items() if data is not None and path not in kept]
    if not files:
        return None
    old_protos = {path: data for path, data in old.items() if path.endswith(".proto") and data is not None}
    new_protos = {f.path: f.data for f in new if f.path.endswith(".proto")}
    protos_changed = old_protos != new_protos
    protos = ApiChangeReport(())
    if protos_changed:
        before_schema = _schema(old_protos, at=old_ref)
        protos = ApiChangeReport(compare_protos(before_schema, _schema(new_protos, at=None)))
    old_http = next((data for path, data in old.items() if not path.endswith(".proto") and data is not None), None)
    new_http = next((f for f in new if not f.path.endswith(".proto")), None)
    http_changed = old_http != (new_http.data if new_http is not None else None)
    http = ApiChangeReport(())
    if http_changed:
        http = _compare_http(old_http, new_http, old_ref=old_ref, records=records)
    return EnvdReport(tuple(files), protos, http, protos_changed, http_changed)


def _schema(protos: Mapping[str, bytes], *, at: str | None) -> ProtoSchema:
    """The protos' declarations; `at`: the old pin, whose protos no longer parsing is said as such."""
    if not protos:
        return ProtoSchema()
    try:
        descriptors = read_descriptors(parse_protos(protos))
    except ToolError as exc:
        if at is None:
            raise
        why = Problem(
            f"the envd protos at the old pin {at} no longer parse with the pinned protoc (below): "
            "the report cannot compare them",
            remedy="bump from a pin whose protos parse, or fix the protoc pin",
        )
        raise ToolError(why, *exc.problems) from None
    return index_protos(descriptors, [path.removeprefix(ENVD_DIR + "/") for path in protos])


def _compare_http(
    old: bytes | None, new: SyncedFile | None, *, old_ref: str, records: Records | None
) -> ApiChangeReport:
    """envd.yaml by the control plane's comparison: the public operations graded, the orchestrator's listed as none."""
    shown = f"{old_ref}:{new.path if new is not None else 'envd.yaml'}"
    old_data = read_spec(old, display_path=shown).data if old is not None else None
    new_document = read_spec(new.data, display_path=new.path) if new is not None else None
    new_data = new_document.data if new_document is not None else None
    empty = _empty_like(new_data or old_data or {})
    old_public, old_internal = _views(old_data) if old_data is not None else (empty, empty)
    new_public, new_internal = _views(new_data) if new_data is not None else (empty, empty)
    try:
        public = compare_specs(old_public, new_public, records=records)
        internal = compare_specs(old_internal, new_internal, records=records)
    except Exception:
        # Read, not yet validated (the pipeline validates it beside the control plane's): a document
        # the comparison cannot walk is said by the validator's problems, as bump does for the spec.
        problems = validation_problems(new_document) if new_document is not None else []
        if problems:
            raise ToolError(*problems) from None
        raise
    upstream_only = tuple(replace(c, level="none", why=WHY_ORCHESTRATOR_ONLY) for c in internal.changes)
    return ApiChangeReport(public.changes + upstream_only, public.description_changes)


def _empty_like(data: Mapping[str, Any]) -> dict[str, Any]:
    """A document with no operations, standing in for an envd.yaml one pin lacks."""
    return {"openapi": data.get("openapi", "3.0.0"), "info": data.get("info", {}), "paths": {}}


def _views(data: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the operations the SDK may call, the orchestrator's `x-internal` ones), each with the components it uses."""
    views = []
    for internal in (False, True):
        view = copy.deepcopy(data)
        paths = view.get("paths")
        paths = paths if isinstance(paths, dict) else {}
        for route, item in list(paths.items()):
            if not isinstance(item, dict) or "$ref" in item:
                continue
            for method in HTTP_METHODS:
                operation = item.get(method)
                if isinstance(operation, dict) and (operation.get("x-internal") is True) != internal:
                    del item[method]
            if not any(method in item for method in HTTP_METHODS):
                del paths[route]
        _remove_unused_components(view)
        views.append(view)
    return views[0], views[1]


def render_envd_section(report: EnvdReport, *, new_ref: str, http_level: Level) -> str:
    """Markdown for the report: the files, then what each kind of file changes, by what SDK users lose or gain.

    `http_level`: the control plane's, which the data plane's may raise (the Python API's section says its own).
    Names come from the runtime's files: escaped and shown as code spans, as the API report shows them.
    """
    notes: list[str] = []
    whole = ApiChangeReport(report.protos.changes + report.http.changes, report.http.description_changes)
    lines = [TITLE, "", semver_line(whole), "", f"Synced from {new_ref} with the control plane:", "", *report.files]
    if report.protos_changed:
        lines += ["", PROTOS_TITLE]
        sections = render_sections(report.protos, notes, titles=_TITLES, heading="####")
        lines += sections or ["", "No change on the wire: comments, layout or declaration order only."]
    if report.http_changed:
        lines += ["", HTTP_TITLE]
        sections = render_sections(report.http, notes, titles=_TITLES, heading="####")
        lines += sections or ["", "No change to an operation the SDK may call."]
    if LEVELS.index(report.level) > LEVELS.index(http_level):
        lines += ["", f"The data plane raises the fragment's type to at least `{BUMP_TYPES[report.level]}`."]
    lines += render_notes(notes, heading="###")
    return "\n".join(lines) + "\n"


def envd_fragment_lines(report: EnvdReport) -> list[str]:
    """The changelog fragment's lines for the data plane: what SDK users see change, each file's kind named."""
    return fragment_lines(report.protos, "envd, ") + fragment_lines(report.http, "envd.yaml, ")


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
