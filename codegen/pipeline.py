"""The pipeline, step by step: source, fetch, spec, contract, filter, generate, overlays, format, stamp.

The contract, the operation map, the templates and codegen's own source are
read once, first (codegen/generation/inputs.py): the run generates from those
bytes and records its output under their digest.  The spec's validation runs
in a thread beside contract, filter, generate, overlays and format
(`validated_alongside`), and its verdict is taken before anything is stamped;
a spec this validator already passed on this machine is not validated again
(codegen/generation/cache.py), unless the caller says `use_cache=False`.

Every verb runs `build` and differs only in what it does with the result:
`generate` writes the staged output over the tree (codegen/tree/write.py), `check`
compares it with the tree (codegen/commands/check.py), `bump` builds at a new commit
and reports the API change first (codegen/commands/bump.py).  `build` never writes to
the tree; a real generation records its output's digests in codegen's cache
folder (codegen/generation/cache.py) so that a later check of the same inputs
can skip it.  Each step prints its duration and what it used (codegen/messages.py).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext
from dataclasses import dataclass, replace
from importlib.metadata import version
from typing import Any

from codegen.config import CONTRACT, OPERATIONS, SPEC, Project, Source
from codegen.contract import check_contract, parse_contract
from codegen.errors import CodegenError, Problem
from codegen.generation.cache import (
    generation_key,
    recall_valid,
    record,
    record_valid,
    validation_key,
)
from codegen.generation.generators import Generators, leave_signals_to_the_main_thread, open_generators
from codegen.generation.inputs import GenerationInputs, read_inputs
from codegen.generation.stage import Staged, generate_tree, stamp
from codegen.messages import Messages
from codegen.openapi.document import SpecDocument, load_spec, read_spec, validation_problems
from codegen.openapi.error_codes import error_code_problems
from codegen.openapi.operation_map import MappedOperation, check_operation_map, parse_operation_map
from codegen.openapi.sdk_filter import filter_spec
from codegen.upstream.fetch import FetchedSpec, fetch_spec

# A codegen source file modified after this moment may not be the code that ran
# (codegen/generation/inputs.py); one imported later (the overlays, on the free core) and not
# modified since is the same bytes `read_inputs` reads after it.
IMPORTED_NS = time.time_ns()


@dataclass(frozen=True)
class Build:
    source: Source
    fetched: FetchedSpec
    filtered: dict[str, Any]
    staged: Staged


def spec_display(source: Source, fetched: FetchedSpec) -> str:
    """The spec as the user knows it: the tracked file, or the upstream's at the commit."""
    return SPEC if fetched.origin == "lock" else f"runtime@{source.short_commit}:{source.spec_path}"


def parse_spec(source: Source, fetched: FetchedSpec, messages: Messages, *, validate: bool = True) -> SpecDocument:
    """The spec step; `validate=False` leaves the validator to `validated_alongside`."""
    with messages.step("spec") as used:
        read = load_spec if validate else read_spec
        document = read(fetched.data, display_path=spec_display(source, fetched))
        used(f"{document.display_path}, {len(fetched.data):,} bytes, OpenAPI {document.data.get('openapi')}")
    return document


@contextmanager
def validated_alongside(
    document: SpecDocument, messages: Messages, *, on_pass: Callable[[], None] = lambda: None
) -> Iterator[None]:
    """Validate the spec in a thread while the block runs; an invalid spec's problems come first.

    openapi-spec-validator is pure Python: on the runtime's 4,000-line spec it
    costs about 2 s with its imports, while the generators are subprocesses,
    so the two share the machine instead of taking turns.  When the spec is
    invalid, its problems replace whatever the block failed with: they are
    the cause.  Nothing after the block (stamp, cache record, write) runs on
    an unvalidated spec.
    """
    verdict: list[Problem] = []
    timing: list[float] = []

    def validate() -> None:
        leave_signals_to_the_main_thread()
        started = time.perf_counter()
        try:
            verdict.extend(validation_problems(document))
        except Exception as error:  # the verdict must say something whatever happened
            verdict.append(Problem(f"the validator failed: {type(error).__name__}: {error}"))
        timing.append(time.perf_counter() - started)

    worker = threading.Thread(target=validate, name="codegen-validate", daemon=True)
    worker.start()
    try:
        yield
    except Exception:
        worker.join()
        if verdict:
            raise CodegenError(*verdict) from None
        raise
    worker.join()
    if verdict:
        raise CodegenError(*verdict)
    on_pass()
    messages.step_done(
        "validate",
        timing[0],
        f"openapi-spec-validator {version('openapi-spec-validator')}",
        "alongside contract to format",
    )


def check_requirements(
    inputs: GenerationInputs, source: Source, document: SpecDocument, messages: Messages
) -> tuple[tuple[MappedOperation, ...], tuple[str, ...]]:
    """The contract step: the contract, the operation map and the error codes; every miss reported."""
    with messages.step("contract") as used:
        operations = parse_operation_map(inputs.required("operations"), display_path=OPERATIONS)
        contract = check_contract(document, parse_contract(inputs.required("contract"), display_path=CONTRACT))
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
    fetched: FetchedSpec | None = None,
    document: SpecDocument | None = None,
    use_cache: bool = True,
    generators: Generators | None = None,
) -> Build:
    """Every step; a caller that fetched or parsed the spec itself (check, bump) hands it in.

    `generate` hands in generators it started before importing this module (codegen/generation/generators.py).
    """
    with ExitStack() as stack:
        if generators is None:
            generators = stack.enter_context(open_generators(project))  # refused: a cache inside the project
        return _build(project, source, messages, fetched, document, use_cache, generators)


def _build(
    project: Project,
    source: Source,
    messages: Messages,
    fetched: FetchedSpec | None,
    document: SpecDocument | None,
    use_cache: bool,
    generators: Generators,
) -> Build:
    inputs = read_inputs(project, imported_ns=IMPORTED_NS)
    if fetched is None:
        fetched = fetch_spec(project, source, messages)
    validation: AbstractContextManager[None] = nullcontext()  # a document handed in is validated
    if document is None:
        document = parse_spec(source, fetched, messages, validate=False)
        validated = validation_key(inputs, fetched.data)
        if use_cache and recall_valid(project, validated):
            validation = _passed_before(messages)
        else:
            validation = validated_alongside(document, messages, on_pass=lambda: record_valid(project, validated))
    with validation:
        operations, warnings = check_requirements(inputs, source, document, messages)
        with messages.step("filter") as used:
            filtered = filter_spec(document.data, tags=source.sdk_tags, operations=operations)
            used(f"tags {', '.join(source.sdk_tags)}: {len(filtered.get('paths', {}))} path(s)")
        try:
            generated = generate_tree(generators, inputs, source, filtered, messages)
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
    if inputs.code_changed_since_import:
        changed = ", ".join(f"codegen/{rel}" for rel in inputs.code_changed_since_import)
        messages(f"not recorded for the check's cache: {changed} changed while this run was starting")
    else:
        record(project, generation_key(inputs, source, fetched.data), staged.files(), warnings)
    return Build(source, fetched, filtered, staged)


@contextmanager
def _passed_before(messages: Messages) -> Iterator[None]:
    yield
    messages.step_done(
        "validate",
        0.0,
        f"openapi-spec-validator {version('openapi-spec-validator')}",
        "this spec passed it before on this machine",
    )
