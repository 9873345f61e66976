"""The pipeline, step by step: source, fetch, spec, contract, filter, generate, overlays, twins, format, stamp.

How it works, and why: docs/maintainers/design.md, "codegen/pipeline.py".
"""

from __future__ import annotations

import functools
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
from codegen.envd.synced import SyncedFile, http_spec_of
from codegen.generation.cache import generated_from, generation_records, record, validation_records
from codegen.generation.generators import (
    Toolchain,
    filtered_json,
    join_helper,
    open_generators,
    start_helper,
)
from codegen.generation.inputs import GenerationInputs, read_inputs
from codegen.generation.protoc import protos_of
from codegen.generation.stage import Staged, generate_tree, stamp
from codegen.messages import Messages
from codegen.upstream.fetch import FetchedSpec, fetch_spec
from toolkit.errors import Problem, ToolError
from toolkit.paths import CONTRACT, OPERATIONS, SPEC, Project
from toolkit.signals import interrupt_behind

if TYPE_CHECKING:
    from codegen.openapi.document import SpecDocument
    from codegen.openapi.operation_map import MappedOperation

# The spec's own steps (PyYAML, the contract, the filter) import their modules as they run: a run
# that stops at the fetch (an unreachable upstream, a refused pin) never pays for them.


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
    also: tuple[SpecDocument, ...] = (),
) -> Iterator[None]:
    """Validate the spec in a thread while the block runs; an invalid spec's problems come first.

    openapi-spec-validator is pure Python: on the runtime's 4,000-line spec it
    costs about 2 s with its imports, while the generators are subprocesses,
    so the two share the machine instead of taking turns.  When the spec is
    invalid, its problems replace whatever the block failed with: they are
    the cause.  Nothing after the block (stamp, cache record, write) runs on
    an unvalidated spec.  `also`: envd's HTTP API (codegen/envd/), validated by the same thread after it.
    """
    from codegen.openapi.document import validation_problems

    verdict: list[Problem] = []
    timing: list[float] = []

    def validate() -> None:
        started = time.perf_counter()
        try:
            for each in (document, *also):
                verdict.extend(validation_problems(each))
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
        "alongside contract to format",
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


@dataclass(frozen=True)
class Run:
    """What every step of one run uses: the project, the pin, where it speaks, its generators and the inputs it read.

    `use_cache=False` (`--no-cache`): the spec fetched afresh, and validated whatever this machine remembers.
    """

    project: Project
    source: Source
    messages: Messages
    generators: Toolchain
    inputs: GenerationInputs
    use_cache: bool = True


@contextmanager
def open_run(
    project: Project,
    source: Source,
    messages: Messages,
    *,
    generators: Toolchain | None = None,
    use_cache: bool = True,
) -> Iterator[Run]:
    """A run with the inputs read now, and `generators`, which its caller started, or its own, started now."""
    with ExitStack() as stack:
        if generators is None:
            generators = stack.enter_context(open_generators(project))  # refused: a cache folder inside the project
        inputs = read_inputs(project, imported_ns=codegen.LOADED_NS)
        yield Run(project, source, messages, generators, inputs, use_cache)


@dataclass(frozen=True)
class ReadSpec:
    """A spec its caller fetched and read already (`bump`, for its report): read, not yet validated."""

    fetched: FetchedSpec
    document: SpecDocument


def build(run: Run, spec: FetchedSpec | ReadSpec | None = None) -> Build:
    """Fetch, prepare (spec, contract, filter), generate beside the validator, take its verdict, stamp.

    `spec` is as far as the caller got with it: nowhere (None), fetched (`check`) or read (`bump`).
    """
    if isinstance(spec, ReadSpec):
        fetched, document = spec.fetched, spec.document
    else:
        fetched = fetch_spec(run.project, run.source, run.messages, fresh=not run.use_cache) if spec is None else spec
        document = parse_spec(run.source, fetched, run.messages, validate=False)
    with _validation(run, fetched, document):  # its verdict is taken at the block's end, before the stamp
        filtered, warnings, envd_http = prepare(run, fetched, document)
        try:
            generated = generate_tree(
                run.generators,
                run.inputs,
                run.source,
                filtered,
                run.messages,
                protos=protos_of((f.path, f.data) for f in fetched.synced),
                envd_http=envd_http,
            )
        except ToolError as failed:
            raise _named_after(failed, spec_display(run.source, fetched)) from None
    with run.messages.step("stamp") as note:
        staged = stamp(run.source, fetched.data, fetched.blob_id, generated, fetched.synced)
        note(f"{len(staged.generated)} generated file(s), the lock and the manifest")
    edited = run.inputs.code_changed_since_import  # now: some of it was imported after the inputs were read
    if edited:
        run.messages(f"not recorded for the check's cache: {', '.join(edited)} changed while this run ran")
    else:
        generation = generated_from(run.source, fetched.data, fetched.synced)
        record(generation_records(run.project, run.inputs), generation, staged.files(), warnings)
    return Build(run.source, fetched, filtered, staged)


def prepare(
    run: Run, fetched: FetchedSpec, document: SpecDocument
) -> tuple[dict[str, Any], tuple[str, ...], dict[str, Any] | None]:
    """The contract and filter steps: the filtered spec (as the generators read it), the contract's warnings,
    and envd's filtered HTTP API (None: none synced)."""
    from codegen.envd.lane import check_data_plane  # protobuf: for a run that gets this far
    from codegen.openapi.sdk_filter import INTERNAL, filter_internal, filter_spec

    messages = run.messages
    # The data plane's lane (codegen/envd/): checked here, before anything is generated from either plane.
    data_plane = check_data_plane(fetched.synced, run.inputs.required("contract"), messages)
    operations, warnings = check_requirements(run.inputs, run.source, document, messages)
    with messages.step("filter") as note:
        # As the generators read it, so that the overlays and the cache have the same document.
        kept = filter_spec(document.data, tags=run.source.sdk_tags, operations=operations)
        filtered = json.loads(filtered_json(kept))
        note(f"tags {', '.join(run.source.sdk_tags)}: {len(filtered.get('paths', {}))} path(s)")
        envd_http = None
        if data_plane is not None and data_plane.http_document is not None:
            kept_http = filter_internal(data_plane.http_document, display_path=data_plane.http_spec or "")
            envd_http = json.loads(filtered_json(kept_http))
            note(f"{data_plane.http_spec} without {INTERNAL}: {len(envd_http.get('paths', {}))} path(s)")
    return filtered, warnings, envd_http


def read_http_spec(file: SyncedFile) -> SpecDocument:
    """envd's HTTP API read as the spec is (`read_spec`'s bounds), its validation left to `validated_alongside`."""
    from codegen.openapi.document import read_spec

    return read_spec(file.data, display_path=file.path)


def _validation(run: Run, fetched: FetchedSpec, document: SpecDocument) -> AbstractContextManager[None]:
    """The validator's verdict on the fetched spec: the one this machine recorded, or taken beside the block.

    Its input is the spec, and envd's HTTP API when one is synced beside it.
    """
    http = http_spec_of(fetched.synced)
    validated = fetched.data if http is None else fetched.data + b"\0" + http.data
    verdicts = validation_records(run.project, run.inputs)
    if run.use_cache and verdicts.recall(validated) is True:
        return _passed_before(run.messages)
    on_pass = functools.partial(verdicts.remember, validated, True)
    # envd's HTTP API is read (bounded, OpenAPI 3, local references) before the block, validated in it.
    also = (read_http_spec(http),) if http is not None else ()
    return validated_alongside(document, run.messages, on_pass=on_pass, also=also)


def _named_after(failed: ToolError, display: str) -> ToolError:
    """A generator names the operation in the filtered spec: say which spec that came from."""
    return ToolError(
        *(
            replace(p, where=display + p.where.removeprefix(SPEC)) if p.where and p.where.startswith(f"{SPEC} (") else p
            for p in failed.problems
        )
    )


@contextmanager
def _passed_before(messages: Messages) -> Iterator[None]:
    yield
    messages.step_done(
        "validate",
        0.0,
        f"openapi-spec-validator {version('openapi-spec-validator')}",
        "this spec passed it before on this machine",
    )
