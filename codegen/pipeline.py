"""The pipeline, step by step: source, fetch, spec, contract, filter, generate, overlays, format, stamp.

Every verb runs `build` and differs only in what it does with the result:
`generate` writes the staged output over the tree (codegen/tree.py), `check`
compares it with the tree (codegen/check.py), `bump` builds at a new commit
and reports the API change first (codegen/bump.py).  `build` never writes to
the tree; a real generation records its output's digests in the user cache
(codegen/generation_cache.py) so that a later check of the same inputs can
skip it.  Each step prints its duration and what it used (codegen/messages.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from codegen.base_revision import Base
from codegen.config import CONTRACT, OPERATIONS, SPEC, Project, Source
from codegen.contract import check_contract
from codegen.error_codes import error_code_problems
from codegen.errors import CodegenError
from codegen.generation_cache import generation_key, record
from codegen.messages import Messages
from codegen.operation_map import MappedOperation, check_operation_map, load_operation_map
from codegen.source import FetchedSpec, fetch_spec
from codegen.spec_document import SpecDocument, load_spec
from codegen.spec_filter import filter_spec
from codegen.stage import Staged, generate_tree, stamp


@dataclass(frozen=True)
class Build:
    source: Source
    fetched: FetchedSpec
    filtered: dict[str, Any]
    staged: Staged
    operations: tuple[MappedOperation, ...]
    warnings: tuple[str, ...]  # contract warnings, as printed


def spec_display(source: Source, fetched: FetchedSpec) -> str:
    """The spec as the user knows it: the tracked file, or the upstream's at the commit."""
    return SPEC if fetched.origin == "lock" else f"runtime@{source.short_commit}:{source.spec_path}"


def parse_spec(source: Source, fetched: FetchedSpec, messages: Messages) -> SpecDocument:
    with messages.step("spec") as used:
        document = load_spec(fetched.data, display_path=spec_display(source, fetched))
        used(f"{document.display_path}, {len(fetched.data):,} bytes, OpenAPI {document.data.get('openapi')}")
    return document


def check_requirements(
    project: Project, source: Source, document: SpecDocument, messages: Messages
) -> tuple[tuple[MappedOperation, ...], tuple[str, ...]]:
    """The contract step: the contract, the operation map and the error codes; every miss reported."""
    with messages.step("contract") as used:
        operations = load_operation_map(project.operations, display_path=OPERATIONS)
        contract = check_contract(document, project.contract)
        warnings = tuple(warning.render() for warning in contract.warnings)
        for warning in warnings:  # also when misses stop the run: they are reported beside them
            messages.warning(warning)
        misses = contract.errors
        misses += check_operation_map(document, operations, source.sdk_tags)
        misses += error_code_problems(document)
        if misses:
            raise CodegenError(*misses)
        used(f"{CONTRACT}, {OPERATIONS}: {len(operations)} operations")
    return operations, warnings


def build(
    project: Project,
    source: Source,
    messages: Messages,
    *,
    base: Base | None = None,
    fetched: FetchedSpec | None = None,
    document: SpecDocument | None = None,
) -> Build:
    """Every step; `base` makes the offline fallback trust only the base's lock."""
    if fetched is None:
        fetched = fetch_spec(project, source, messages, base)
    if document is None:
        document = parse_spec(source, fetched, messages)
    operations, warnings = check_requirements(project, source, document, messages)
    with messages.step("filter") as used:
        filtered = filter_spec(document.data, tags=source.sdk_tags, operations=operations)
        used(f"tags {', '.join(source.sdk_tags)}: {len(filtered.get('paths', {}))} path(s)")
    try:
        generated = generate_tree(project, source, filtered, messages)
    except CodegenError as exc:
        # A generator names the operation in the filtered spec: say which spec that came from.
        display = spec_display(source, fetched)
        raise CodegenError(
            *(
                replace(p, where=display + p.where.removeprefix(SPEC))
                if p.where and p.where.startswith(f"{SPEC} (")
                else p
                for p in exc.problems
            )
        ) from None
    with messages.step("stamp") as used:
        staged = stamp(source, fetched.data, fetched.blob_id, generated)
        used(f"{len(staged.generated)} generated file(s), the lock and the manifest")
    record(generation_key(project, source, fetched.data), staged.files(), warnings)
    return Build(source, fetched, filtered, staged, operations, warnings)
