"""The pipeline, step by step: source, fetch, spec, contract, filter, generate, overlays, format, stamp.

How it works, and why: docs/maintainers/design.md, "codegen/pipeline.py".
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, replace
from importlib.metadata import version
from typing import TYPE_CHECKING, Any

import codegen
from codegen.config import Source
from codegen.generation.cache import (
    Prepared,
    generation_key,
    prepared_key,
    recall_valid,
    record,
    record_prepared,
    record_valid,
    validation_key,
)
from codegen.generation.generators import (
    Generators,
    filtered_json,
    join_helper,
    open_generators,
    start_helper,
)
from codegen.generation.inputs import GenerationInputs, read_inputs
from codegen.generation.stage import Staged, generate_tree, stamp
from codegen.messages import Messages
from codegen.upstream.fetch import FetchedSpec, fetch_spec
from toolkit.errors import Problem, ToolError, interrupt_behind
from toolkit.paths import CONTRACT, OPERATIONS, SPEC, Project

if TYPE_CHECKING:
    from codegen.openapi.document import SpecDocument
    from codegen.openapi.operation_map import MappedOperation

# The spec's own steps (PyYAML, the contract, the filter) import their modules as they run: a
# warm `nox -s codegen` starts from the spec prepared before (codegen/commands/generate.py) and
# needs none of them, on the core the first finished generator frees.


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
    from codegen.openapi.document import load_spec, read_spec

    with messages.step("spec") as note:
        read = load_spec if validate else read_spec
        document = read(fetched.data, display_path=spec_display(source, fetched))
        note(f"{document.display_path}, {len(fetched.data):,} bytes, OpenAPI {document.data.get('openapi')}")
    return document


@contextmanager
def validated_alongside(
    document: SpecDocument,
    messages: Messages,
    *,
    on_pass: Callable[[], None] = lambda: None,
    beside: str = "alongside contract to format",
) -> Iterator[None]:
    """Validate the spec in a thread while the block runs; an invalid spec's problems come first.

    openapi-spec-validator is pure Python: on the runtime's 4,000-line spec it
    costs about 2 s with its imports, while the generators are subprocesses,
    so the two share the machine instead of taking turns.  When the spec is
    invalid, its problems replace whatever the block failed with: they are
    the cause.  Nothing after the block (stamp, cache record, write) runs on
    an unvalidated spec.
    """
    from codegen.openapi.document import validation_problems

    verdict: list[Problem] = []
    timing: list[float] = []

    def validate() -> None:
        started = time.perf_counter()
        try:
            verdict.extend(validation_problems(document))
        except Exception as error:  # the verdict must say something whatever happened
            verdict.append(Problem(f"the validator failed: {type(error).__name__}: {error}"))
        timing.append(time.perf_counter() - started)

    # A daemon that never takes a signal: an interrupted run never waits for it (it may be waiting on the
    # import lock an interrupted import left held), and ends with os._exit (codegen/__main__.py).
    worker = threading.Thread(target=validate, name="codegen-validate", daemon=True)
    start_helper(worker)
    try:
        yield
    except Exception as failed:
        interrupt = interrupt_behind(failed)
        if interrupt is not None:  # a signal the block turned into an error of its own: the run's, at once
            raise interrupt from None
        join_helper(worker)
        if verdict:
            raise ToolError(*verdict) from None
        raise
    join_helper(worker)
    if verdict:
        raise ToolError(*verdict)
    on_pass()
    messages.step_done(
        "validate",
        timing[0],
        f"openapi-spec-validator {version('openapi-spec-validator')}",
        beside,
    )


def check_requirements(
    inputs: GenerationInputs, source: Source, document: SpecDocument, messages: Messages
) -> tuple[tuple[MappedOperation, ...], tuple[str, ...]]:
    """The contract step: the contract, the operation map and the error codes; every miss reported."""
    from codegen.contract import check_contract, parse_contract
    from codegen.openapi.error_codes import error_code_problems
    from codegen.openapi.operation_map import check_operation_map, parse_operation_map

    with messages.step("contract") as note:
        operations = parse_operation_map(inputs.required("operations"), display_path=OPERATIONS)
        contract = check_contract(document, parse_contract(inputs.required("contract"), display_path=CONTRACT))
        warnings = tuple(warning.render() for warning in contract.warnings)
        for warning in warnings:  # also when misses stop the run: they are reported beside them
            messages.warning(warning)
        misses = contract.errors
        misses += check_operation_map(document, operations, source.sdk_tags)
        misses += error_code_problems(document)
        if misses:
            raise ToolError(*misses)
        note(f"{CONTRACT}, {OPERATIONS}: {len(operations)} operations")
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
    inputs: GenerationInputs | None = None,
    prepared: Prepared | None = None,
) -> Build:
    """Every step; a caller that fetched or parsed the spec itself (check, bump) hands it in.

    `generate` hands in the generators it started before importing this module, the inputs it
    read, and on a warm run the spec it prepared before and handed them ahead of the fetch
    (codegen/commands/generate.py): then the fetch decides whether that spec stands.
    """
    with ExitStack() as stack:
        if generators is None:
            # refused: a cache inside the project
            generators = stack.enter_context(open_generators(project))
        if inputs is None:
            inputs = read_inputs(project, imported_ns=codegen.LOADED_NS)
        if prepared is not None:
            warm = _build_prepared(project, source, messages, inputs, generators, prepared)
            if isinstance(warm, Build):
                return warm
            # The generators read another spec than the one fetched: stop them, start over from it.
            short = source.short_commit
            messages(f"the spec prepared on this machine before is not runtime@{short}'s: preparing it anew")
            generators.close()
            generators = stack.enter_context(open_generators(project))
            fetched = warm
        if fetched is None:
            fetched = fetch_spec(project, source, messages, fresh=not use_cache)
        return _build(project, source, messages, inputs, fetched, document, use_cache, generators)


def _build(
    project: Project,
    source: Source,
    messages: Messages,
    inputs: GenerationInputs,
    fetched: FetchedSpec,
    document: SpecDocument | None,
    use_cache: bool,
    generators: Generators,
) -> Build:
    if document is None:
        document = parse_spec(source, fetched, messages, validate=False)
    read = document  # a document handed in (bump's) is read, not validated, like this one
    with _validation(project, inputs, fetched, lambda: read, messages, use_cache=use_cache):
        from codegen.openapi.sdk_filter import filter_spec

        operations, warnings = check_requirements(inputs, source, document, messages)
        with messages.step("filter") as note:
            # As the generators read it, so that the overlays and the cache have the same document.
            filtered = json.loads(
                filtered_json(filter_spec(document.data, tags=source.sdk_tags, operations=operations))
            )
            note(f"tags {', '.join(source.sdk_tags)}: {len(filtered.get('paths', {}))} path(s)")
        try:
            generated = generate_tree(generators, inputs, source, filtered, messages)
        except ToolError as failed:
            raise _named_after(failed, spec_display(source, fetched)) from None
        assert generated is not None  # nothing runs while it formats that could find it unwanted
    staged = _stamp(project, source, messages, inputs, fetched, generated, warnings, filtered)
    return Build(source, fetched, filtered, staged)


def _validation(
    project: Project,
    inputs: GenerationInputs,
    fetched: FetchedSpec,
    document: Callable[[], SpecDocument],
    messages: Messages,
    *,
    use_cache: bool,
    beside: str = "alongside contract to format",
) -> AbstractContextManager[None]:
    """The validator's verdict on the fetched spec: the one this machine recorded, or taken beside the block."""
    validated = validation_key(inputs, fetched.data)
    if use_cache and recall_valid(project, validated):
        return _passed_before(messages)
    return validated_alongside(document(), messages, on_pass=lambda: record_valid(project, validated), beside=beside)


def _as_prepared(
    inputs: GenerationInputs, source: Source, fetched: FetchedSpec, prepared: Prepared
) -> SpecDocument | None:
    """The fetched spec, read, when the spec, contract and filter steps make of it exactly the prepared spec.

    A prepared entry is data in the cache folder, which whoever can write the folder may have
    edited, and the generators read its filtered spec: so that spec is derived again from the
    fetched bytes and compared, never trusted (tens of milliseconds, on the core the first
    finished generator freed).  None: it is not, and the run starts over from the fetched spec.
    """
    from codegen.openapi.document import read_spec
    from codegen.openapi.sdk_filter import filter_spec

    if not prepared.is_for(fetched.data):
        return None
    try:
        document = read_spec(fetched.data, display_path=spec_display(source, fetched))
        operations, warnings = check_requirements(inputs, source, document, Messages(err=lambda _: None))
        derived = json.loads(filtered_json(filter_spec(document.data, tags=source.sdk_tags, operations=operations)))
    except ToolError:
        return None  # the full run says why
    return document if derived == prepared.filtered and warnings == prepared.warnings else None


class _PreparedSpecCheck:
    """The fetch that confirms a prepared spec, and the validator's verdict on it: once, while ruff formats.

    `holds()` is `generate_tree`'s `while_formatting`: whether the generators' work is for the spec
    fetched.  Afterwards `fetched` is that spec, and `failed` why the fetch or the validator refused it.
    """

    def __init__(
        self, project: Project, source: Source, messages: Messages, inputs: GenerationInputs, prepared: Prepared
    ) -> None:
        self.project, self.source, self.messages = project, source, messages
        self.inputs, self.prepared = inputs, prepared
        self.fetched: FetchedSpec | None = None
        self.failed: ToolError | None = None
        self._held: bool | None = None

    def holds(self) -> bool:
        if self._held is None:
            try:
                self._held = self._confirm()
            except ToolError as failed:  # the run's failure, whatever the generators say
                self.failed, self._held = failed, False
        return self._held

    def _confirm(self) -> bool:
        fetched = self.fetched = fetch_spec(self.project, self.source, self.messages)
        document = _as_prepared(self.inputs, self.source, fetched, self.prepared)
        if document is None:
            return False
        display = spec_display(self.source, fetched)
        paths = len(self.prepared.filtered.get("paths", {}))
        self.messages.step_done(
            "spec",
            0.0,
            f"{display}, {len(fetched.data):,} bytes",
            f"as prepared on this machine before: contract and filter, {paths} path(s)",
        )
        for warning in self.prepared.warnings:
            self.messages.warning(warning)
        # Said only when the validator runs: why it has no verdict on a spec prepared before.
        if self.prepared.validation == validation_key(self.inputs, fetched.data):
            why = "its verdict on it was not kept on this machine"
        else:
            why = "the validator has changed since"
        with _validation(
            self.project,
            self.inputs,
            fetched,
            lambda: document,
            self.messages,
            use_cache=True,
            beside=f"after the fetch: the spec was prepared before, {why}",
        ):
            pass
        return True


def _build_prepared(
    project: Project,
    source: Source,
    messages: Messages,
    inputs: GenerationInputs,
    generators: Generators,
    prepared: Prepared,
) -> Build | FetchedSpec:
    """A warm `nox -s codegen`: the generators work on the spec prepared before; the fetch says whether it stands.

    Nothing here takes their cores: the fetch, and the validator's verdict on what it fetched, run
    while ruff formats the wire models and the overlays.  A failed fetch is the run's failure,
    whatever the generators said; a generator's failure stands only for a spec the fetch confirmed.
    The fetched spec instead of a build: it is not the one prepared, and the run starts over from it.
    """
    confirm = _PreparedSpecCheck(project, source, messages, inputs, prepared)
    generator_failed: ToolError | None = None
    try:
        generated = generate_tree(
            generators,
            inputs,
            source,
            prepared.filtered,
            messages,
            while_formatting=confirm.holds,
            formatting_alongside="the fetch",
        )
    except ToolError as failed:  # a generator's failure stands only for a spec the fetch confirmed
        generated, generator_failed = None, failed
    if not confirm.holds():  # the fetch decides first, whatever the generators said
        if confirm.failed is not None:
            raise confirm.failed from None
        assert confirm.fetched is not None
        return confirm.fetched
    assert confirm.fetched is not None
    if generator_failed is not None:
        raise _named_after(generator_failed, spec_display(source, confirm.fetched)) from None
    assert generated is not None
    staged = _stamp(project, source, messages, inputs, confirm.fetched, generated, prepared.warnings, None)
    return Build(source, confirm.fetched, prepared.filtered, staged)


def _named_after(failed: ToolError, display: str) -> ToolError:
    """A generator names the operation in the filtered spec: say which spec that came from."""
    return ToolError(
        *(
            replace(p, where=display + p.where.removeprefix(SPEC)) if p.where and p.where.startswith(f"{SPEC} (") else p
            for p in failed.problems
        )
    )


def _stamp(
    project: Project,
    source: Source,
    messages: Messages,
    inputs: GenerationInputs,
    fetched: FetchedSpec,
    generated: dict[str, bytes],
    warnings: tuple[str, ...],
    filtered: dict[str, Any] | None,
) -> Staged:
    """The stamp step, and the records of this run for the next: its output, and `filtered` as prepared."""
    with messages.step("stamp") as note:
        staged = stamp(source, fetched.data, fetched.blob_id, generated)
        note(f"{len(staged.generated)} generated file(s), the lock and the manifest")
    edited = inputs.code_changed_since_import  # now: some of it was imported after the inputs were read
    if edited:
        changed = ", ".join(edited)
        messages(f"not recorded for the check's cache: {changed} changed while this run ran")
    else:
        record(project, generation_key(inputs, source, fetched.data), staged.files(), warnings)
        if filtered is not None:
            validation = validation_key(inputs, fetched.data)
            record_prepared(
                project, prepared_key(inputs, source), fetched.data, filtered, warnings, validation=validation
            )
    return staged


@contextmanager
def _passed_before(messages: Messages) -> Iterator[None]:
    yield
    messages.step_done(
        "validate",
        0.0,
        f"openapi-spec-validator {version('openapi-spec-validator')}",
        "this spec passed it before on this machine",
    )
