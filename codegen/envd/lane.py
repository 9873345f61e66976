"""The envd step of the pipeline: the protos, envd.yaml and the data-plane contract, before anything is generated.

How it works, and why: docs/maintainers/design.md, "codegen/envd/lane.py".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from codegen.envd.contract import http_misses, parse_data_plane, service_misses
from codegen.envd.protos import name_problems, parse_protos, read_descriptors
from codegen.envd.synced import http_spec_of
from codegen.messages import Messages
from toolkit.errors import Problem, ToolError
from toolkit.paths import CONTRACT, ENVD_DIR

if TYPE_CHECKING:
    from codegen.envd.synced import SyncedFile


@dataclass(frozen=True)
class CheckedDataPlane:
    """What the lane hands on to generation (issue 41's later steps): the protos as protoc read them."""

    descriptors: bytes  # FileDescriptorSet, imports included
    protos: tuple[str, ...]  # the synced protos' paths
    http_spec: str | None  # the synced envd.yaml's path
    http_document: dict[str, Any] | None = None  # and its document, as read (the envd client is generated from it)


def check_data_plane(synced: tuple[SyncedFile, ...], contract: bytes, messages: Messages) -> CheckedDataPlane | None:
    """Every check of the envd files; the first file that fails stops the run (exit 2), nothing generated.

    None when `[tool.codegen]` names no envd file.  The order is cheapest and most basic first:
    the protos (bounds, import fence, protoc, names), envd.yaml (the control plane's reading and
    validation), then the contract, whose misses are reported together.
    """
    if not synced:
        return None
    from codegen.openapi.document import read_spec  # deferred, as the pipeline defers it

    with messages.step("envd") as note:
        protos = {f.path: f.data for f in synced if f.path.endswith(".proto")}
        relative = frozenset(path.removeprefix(ENVD_DIR + "/") for path in protos)
        descriptors = parse_protos(protos)
        parsed = read_descriptors(descriptors)
        named = name_problems(parsed, relative)
        if named:
            raise ToolError(*named)
        http = http_spec_of(synced)
        # Read with the control plane's bounds; the validator's verdict on it is taken beside the
        # control plane's (codegen/pipeline.py, `validated_alongside`), before anything is stamped.
        document = read_spec(http.data, display_path=http.path) if http is not None else None
        paths = tuple(f.path for f in synced)
        contract_entries = parse_data_plane(contract, display_path=CONTRACT, envd_files=paths)
        misses = service_misses(contract_entries, parsed, relative)
        warnings: list[Problem] = []
        if document is not None:
            errors, warnings = http_misses(contract_entries, document)
            misses += errors
        for warning in warnings:
            messages.warning(warning.render())
        if misses:
            raise ToolError(*misses)
        rpcs = sum(len(s.method) for f in parsed.file if f.name in relative for s in f.service)
        note(f"{len(protos)} proto(s), {rpcs} RPC(s) through protoc; {http.path if http else 'no envd.yaml'}")
        note(f"contract: {len(contract_entries.services)} service(s), {len(contract_entries.http)} operation(s)")
    return CheckedDataPlane(
        descriptors,
        tuple(protos),
        http.path if http is not None else None,
        document.data if document is not None else None,
    )
