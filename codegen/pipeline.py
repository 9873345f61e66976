"""The pipeline: source -> spec -> contract -> filter -> generate -> overlay -> stage.

Every verb runs `build` and differs only in its last step: `codegen` writes
the staged output over the tree, `check` compares it with the tree, `bump`
builds at a new commit first.  `build` itself never writes to the tree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from codegen.base_revision import Base
from codegen.config import Project, Source
from codegen.contract import check_contract
from codegen.error_codes import error_code_problems
from codegen.errors import CodegenError
from codegen.operation_map import MappedOperation, check_operation_map, load_operation_map
from codegen.source import FetchedSpec, obtain_spec
from codegen.spec_document import SpecDocument, load_spec
from codegen.spec_filter import filter_spec
from codegen.stage import Staged, stage

Say = Callable[[str], None]


@dataclass(frozen=True)
class Build:
    source: Source
    fetched: FetchedSpec
    document: SpecDocument
    filtered: dict[str, Any]
    staged: Staged
    operations: tuple[MappedOperation, ...]


def validated_spec(
    project: Project, source: Source, fetched: FetchedSpec, say: Say
) -> tuple[SpecDocument, tuple[MappedOperation, ...]]:
    """The parsed spec and the operation map, once both hold; every miss of either is reported."""
    say("parse and validate the spec (OpenAPI 3)")
    document = load_spec(fetched.data, display_path="spec/openapi.yml")
    operations = load_operation_map(project.operations, display_path=project.relative(project.operations))
    say(f"check the contract ({project.relative(project.contract)}) and the operation map")
    contract = check_contract(document, project.contract)
    for warning in contract.warnings:
        say(warning.render())
    misses = contract.errors
    misses += check_operation_map(document, operations, source.sdk_tags)
    misses += error_code_problems(document)
    if misses:
        raise CodegenError(*misses)
    return document, operations


def build(project: Project, source: Source, say: Say = lambda _: None, *, base: Base | None = None) -> Build:
    """Everything the verbs share; `base` makes the offline fallback trust only the base's lock."""
    for note in source.notes():
        say(note)
    say(f"fetch {source.spec_path} at runtime@{source.short_commit} from {source.url}")
    fetched = obtain_spec(project, source, base)
    if fetched.note:
        say(fetched.note)
    document, operations = validated_spec(project, source, fetched, say)
    say(f"filter to the SDK's tags ({', '.join(source.sdk_tags)}) and name its operations")
    filtered = filter_spec(document.data, tags=source.sdk_tags, operations=operations)
    staged = stage(project, source, fetched.data, fetched.blob_id, filtered, step=say)
    return Build(source, fetched, document, filtered, staged, operations)
