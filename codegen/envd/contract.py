"""The data plane's entries of spec/contract.yml: the envd services and RPCs the SDK calls, and envd.yaml's operations.

How it works, and why: docs/maintainers/design.md, "codegen/envd/contract.py".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from codegen.contract import ContractEntry, check_entry, is_data_plane, parse_entry
from codegen.openapi.document import SpecDocument  # the dataclass: validation is load_spec's, deferred
from codegen.openapi.plain_yaml import load_yaml
from toolkit.errors import Problem, ToolError
from toolkit.paths import ENVD_DIR

REMEDY = (
    "the contract lands upstream first: bump spec/runtime-ref to a runtime commit that carries it "
    f"(`nox -s bump -- <commit>`); never hand-edit {ENVD_DIR}/"
)
# (client streams, server streams) -> how the contract names an RPC's kind.
KINDS = {
    (False, False): "unary",
    (False, True): "server-streaming",
    (True, False): "client-streaming",
    (True, True): "bidi-streaming",
}
_SERVICE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+")
_RPC = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class ServiceEntry:
    """A Connect service the SDK calls, and the kind of each of its RPCs it calls."""

    service: str  # package.Service
    rpcs: tuple[tuple[str, str], ...]  # (RPC, kind), file order
    why: str
    where: str  # the entry in the contract


@dataclass(frozen=True)
class DataPlaneContract:
    services: tuple[ServiceEntry, ...]
    http: tuple[tuple[str, ContractEntry], ...]  # (envd file the pointer is into, entry)


def parse_data_plane(data: bytes, *, display_path: str, envd_files: tuple[str, ...]) -> DataPlaneContract:
    """The data-plane entries, every malformed one reported (the control plane's are contract.py's)."""
    tree = load_yaml(data, display_path=display_path)
    services: list[ServiceEntry] = []
    http: list[tuple[str, ContractEntry]] = []
    problems: list[Problem] = []
    for index, raw in enumerate(tree.data if isinstance(tree.data, list) else []):
        if not is_data_plane(raw):
            continue
        where = f"{display_path}:{tree.line_of((str(index),))} (entry {index + 1})"
        if "service" in raw:
            service, said = _service_entry(raw, where)
            problems += [Problem(s, where=where) for s in said]
            services += [service] if service is not None else []
            continue
        spec = raw.get("spec")
        if spec not in envd_files or str(spec).endswith(".proto"):
            problems.append(Problem(f"spec must name envd's YAML file in envd-files, not {spec!r}", where=where))
            continue
        # Its index stays the file's, so that its line is the file's own.
        entry, said_problems = parse_entry({k: v for k, v in raw.items() if k != "spec"}, index, tree)
        problems += said_problems
        if entry is not None:
            http.append((str(spec), entry))
    if problems:
        raise ToolError(*problems)
    return DataPlaneContract(tuple(services), tuple(http))


def _service_entry(raw: dict[str, Any], where: str) -> tuple[ServiceEntry | None, list[str]]:
    said: list[str] = []
    unknown = sorted(set(raw) - {"service", "rpcs", "why", "level"})
    if unknown:
        said.append(f"unknown key(s) {', '.join(map(str, unknown))}; a service entry has service, rpcs, why")
    if raw.get("level", "error") != "error":
        said.append("a service entry is level error: the SDK cannot call an RPC that is not there")
    service, rpcs, why = raw.get("service"), raw.get("rpcs"), raw.get("why")
    if not isinstance(service, str) or not _SERVICE.fullmatch(service):
        said.append(f"service must be package.Service, not {service!r}")
    if not isinstance(rpcs, dict) or not rpcs:
        said.append("rpcs must map each RPC the SDK calls to its kind")
        rpcs = {}
    for name, kind in rpcs.items():
        if not isinstance(name, str) or not _RPC.fullmatch(name) or kind not in KINDS.values():
            said.append(f"rpcs: {name!r}: {kind!r} is not one of {', '.join(KINDS.values())}")
    if not isinstance(why, str) or not why.strip():
        said.append("needs a `why`: the reason the SDK relies on this")
    if said:
        return None, said
    assert isinstance(service, str) and isinstance(why, str)
    return ServiceEntry(service, tuple(rpcs.items()), " ".join(why.split()), where), []


def service_misses(contract: DataPlaneContract, descriptors: Any, files: frozenset[str]) -> list[Problem]:
    """Each service or RPC the contract names that the protos (`files`, under ENVD_DIR) lack, or stream otherwise."""
    found: dict[str, tuple[str, dict[str, str]]] = {}
    for file in descriptors.file:
        if file.name in files:
            for service in file.service:
                kinds = {m.name: KINDS[(m.client_streaming, m.server_streaming)] for m in service.method}
                found[f"{file.package}.{service.name}" if file.package else service.name] = (file.name, kinds)
    problems: list[Problem] = []
    for entry in contract.services:
        if entry.service not in found:
            problems.append(_miss(entry, f"the service {entry.service} is missing", ENVD_DIR))
            continue
        file, kinds = found[entry.service]
        for rpc, kind in entry.rpcs:
            has = kinds.get(rpc)
            if has != kind:
                what = "is missing" if has is None else f"is {has} (needs {kind})"
                problems.append(_miss(entry, f"{entry.service}/{rpc} {what}", f"{ENVD_DIR}/{file}"))
    return problems


def _miss(entry: ServiceEntry, what: str, where: str) -> Problem:
    return Problem(f"contract miss: {what}; needed because {entry.why}", where=where, remedy=REMEDY)


def http_misses(contract: DataPlaneContract, document: SpecDocument) -> tuple[list[Problem], list[Problem]]:
    """The envd.yaml entries, checked as the control plane's are: (errors, warnings), each with its pointer."""
    errors: list[Problem] = []
    warnings: list[Problem] = []
    for spec, entry in contract.http:
        if spec == document.display_path:
            misses = [replace(problem, remedy=REMEDY) for problem in check_entry(document, entry)]
            (warnings if entry.level == "warning" else errors).extend(misses)
    return errors, warnings
