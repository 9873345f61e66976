"""The pipeline, step by step: source, fetch, spec, contract, filter, generate, overlays, format, stamp.

How it works, and why: docs/maintainers/design.md, "codegen/pipeline.py".
"""

from __future__ import annotations

import functools
import hashlib
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
from codegen.generation.cache import (
    Prepared,
    generation_key,
    prepared_key,
    recall_valid,
    record,
    record_prepared,
    record_valid,
    synced_digest,
    validation_key,
)
from codegen.generation.generators import (
    Toolchain,
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
    """A run with the inputs read now, and `generators`, which its caller started, or its own, started now.

    (`generate` reads the inputs before it imports this module: it makes its `Run` itself.)
    """
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


def build(run: Run, spec: FetchedSpec | ReadSpec | Prepared | None = None) -> Build:
    """Fetch, prepare (spec, contract, filter), generate beside the validator, take its verdict, stamp.

    `spec` is as far as the caller got with it: nowhere (None), fetched (`check`), read (`bump`), or,
    on a warm `generate`, guessed: the generators already work on the spec an earlier run on this
    machine prepared from the pin (codegen/commands/generate.py), and the fetch says whether it holds.
    """
    if isinstance(spec, Prepared):  # the one decision of a warm run
        warm = _on_the_guess(run, spec)
        if isinstance(warm, Build):
            return warm
        # The generators read another spec than the one fetched: stop them, start over from it.
        short = run.source.short_commit
        run.messages(f"the spec prepared on this machine before is not runtime@{short}'s: preparing it anew")
        run.generators.close()
        with open_generators(run.project) as generators:
            return build(replace(run, generators=generators), warm)
    if isinstance(spec, ReadSpec):
        fetched, document = spec.fetched, spec.document
    else:
        fetched = fetch_spec(run.project, run.source, run.messages, fresh=not run.use_cache) if spec is None else spec
        document = parse_spec(run.source, fetched, run.messages, validate=False)
    with _validation(run, fetched, lambda: document):  # its verdict is taken at the block's end, before the stamp
        prepared = prepare(run, fetched, document, run.messages)
        try:
            generated = generate_tree(run.generators, run.inputs, run.source, prepared.filtered, run.messages)
        except ToolError as failed:
            raise _named_after(failed, spec_display(run.source, fetched)) from None
        assert generated is not None  # nothing runs while it formats that could find it unwanted
    return _stamp(run, fetched, generated, prepared, record_prepared=True)


def prepare(run: Run, fetched: FetchedSpec, document: SpecDocument, messages: Messages) -> Prepared:
    """The contract and filter steps: the filtered spec (as the generators read it) and the contract's warnings."""
    from codegen.envd.lane import check_data_plane  # protobuf: for a run that gets this far
    from codegen.openapi.sdk_filter import filter_spec

    # The data plane's lane (codegen/envd/): checked here, before anything is generated from either plane.
    check_data_plane(fetched.synced, run.inputs.required("contract"), messages)
    operations, warnings = check_requirements(run.inputs, run.source, document, messages)
    with messages.step("filter") as note:
        # As the generators read it, so that the overlays and the cache have the same document.
        kept = filter_spec(document.data, tags=run.source.sdk_tags, operations=operations)
        filtered = json.loads(filtered_json(kept))
        note(f"tags {', '.join(run.source.sdk_tags)}: {len(filtered.get('paths', {}))} path(s)")
    return Prepared(
        spec=hashlib.sha256(fetched.data).hexdigest(),
        filtered=filtered,
        warnings=warnings,
        validation=validation_key(run.inputs, _validated_bytes(fetched)),
    )


def read_http_spec(file: SyncedFile) -> SpecDocument:
    """envd's HTTP API read as the spec is (`read_spec`'s bounds), its validation left to `validated_alongside`."""
    from codegen.openapi.document import read_spec

    return read_spec(file.data, display_path=file.path)


def _validated_bytes(fetched: FetchedSpec) -> bytes:
    """What the validator's verdict is on: the spec, and envd's HTTP API when one is synced beside it."""
    http = http_spec_of(fetched.synced)
    return fetched.data if http is None else fetched.data + b"\0" + http.data


def _validation(
    run: Run,
    fetched: FetchedSpec,
    document: Callable[[], SpecDocument],
    *,
    beside: str = "alongside contract to format",
) -> AbstractContextManager[None]:
    """The validator's verdict on the fetched spec: the one this machine recorded, or taken beside the block."""
    validated = validation_key(run.inputs, _validated_bytes(fetched))
    if run.use_cache and recall_valid(run.project, validated):
        return _passed_before(run.messages)
    on_pass = functools.partial(record_valid, run.project, validated)
    # envd's HTTP API is read (bounded, OpenAPI 3, local references) before the block, validated in it.
    also = tuple(read_http_spec(f) for f in filter(None, [http_spec_of(fetched.synced)]))
    return validated_alongside(document(), run.messages, on_pass=on_pass, beside=beside, also=also)


class _GuessCheck:
    """The fetch that confirms a warm run's guess, and the validator's verdict on it: once, while ruff formats.

    `holds()` is `generate_tree`'s `while_formatting`: whether the generators' work is for the spec
    fetched.  Afterwards `fetched` is that spec, and `failed` why the fetch or the validator refused it.
    """

    def __init__(self, run: Run, guess: Prepared) -> None:
        self.run, self.guess = run, guess
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
        run, guess = self.run, self.guess
        fetched = self.fetched = fetch_spec(run.project, run.source, run.messages)
        document = self._as_guessed(fetched)
        if document is None:
            return False
        display = spec_display(run.source, fetched)
        paths = len(guess.filtered.get("paths", {}))
        run.messages.step_done(
            "spec",
            0.0,
            f"{display}, {len(fetched.data):,} bytes",
            f"as prepared on this machine before: contract and filter, {paths} path(s)",
        )
        for warning in guess.warnings:
            run.messages.warning(warning)
        # Said only when the validator runs: why it has no verdict on a spec prepared before.
        if guess.validation == validation_key(run.inputs, _validated_bytes(fetched)):
            why = "its verdict on it was not kept on this machine"
        else:
            why = "the validator has changed since"
        beside = f"after the fetch: the spec was prepared before, {why}"
        with _validation(run, fetched, lambda: document, beside=beside):
            pass
        return True

    def _as_guessed(self, fetched: FetchedSpec) -> SpecDocument | None:
        """The fetched spec, read, when the spec, contract and filter steps make of it exactly the guess.

        A prepared entry is data in the cache folder, which whoever can write the folder may have
        edited, and the generators read its filtered spec: so that spec is derived again from the
        fetched bytes and compared, never trusted (tens of milliseconds, on the core the first
        finished generator freed).  None: it is not, and the run starts over from the fetched spec.
        """
        if not self.guess.is_for(fetched.data):
            return None
        quiet = Messages(err=lambda _: None)
        try:
            document = parse_spec(self.run.source, fetched, quiet, validate=False)
            derived = prepare(self.run, fetched, document, quiet)
        except ToolError:
            return None  # the full run says why
        return document if (derived.filtered, derived.warnings) == (self.guess.filtered, self.guess.warnings) else None


def _on_the_guess(run: Run, guess: Prepared) -> Build | FetchedSpec:
    """A warm `nox -s codegen`: the generators work on the guess; the fetch says whether it stands.

    Nothing here takes their cores: the fetch, and the validator's verdict on what it fetched, run
    while ruff formats the wire models and the overlays.  A failed fetch is the run's failure,
    whatever the generators said; a generator's failure stands only for a spec the fetch confirmed.
    The fetched spec instead of a build: it is not the one guessed, and the run starts over from it.
    """
    check = _GuessCheck(run, guess)
    generator_failed: ToolError | None = None
    try:
        generated = generate_tree(
            run.generators,
            run.inputs,
            run.source,
            guess.filtered,
            run.messages,
            while_formatting=check.holds,
            formatting_alongside="the fetch",
        )
    except ToolError as failed:  # a generator's failure stands only for a spec the fetch confirmed
        generated, generator_failed = None, failed
    if not check.holds():  # the fetch decides first, whatever the generators said
        if check.failed is not None:
            raise check.failed from None
        assert check.fetched is not None
        return check.fetched
    assert check.fetched is not None
    if generator_failed is not None:
        raise _named_after(generator_failed, spec_display(run.source, check.fetched)) from None
    assert generated is not None
    return _stamp(run, check.fetched, generated, guess, record_prepared=False)


def _named_after(failed: ToolError, display: str) -> ToolError:
    """A generator names the operation in the filtered spec: say which spec that came from."""
    return ToolError(
        *(
            replace(p, where=display + p.where.removeprefix(SPEC)) if p.where and p.where.startswith(f"{SPEC} (") else p
            for p in failed.problems
        )
    )


def _stamp(
    run: Run, fetched: FetchedSpec, generated: dict[str, bytes], prepared: Prepared, *, record_prepared: bool
) -> Build:
    """The stamp step, and the records of this run for the next: its output, and its spec as prepared."""
    with run.messages.step("stamp") as note:
        staged = stamp(run.source, fetched.data, fetched.blob_id, generated, fetched.synced)
        note(f"{len(staged.generated)} generated file(s), the lock and the manifest")
    edited = run.inputs.code_changed_since_import  # now: some of it was imported after the inputs were read
    if edited:
        changed = ", ".join(edited)
        run.messages(f"not recorded for the check's cache: {changed} changed while this run ran")
    else:
        key = generation_key(run.inputs, run.source, fetched.data, synced_digest(fetched.synced))
        record(run.project, key, staged.files(), prepared.warnings)
        if record_prepared:
            _remember_prepared(run, fetched, prepared)
    return Build(run.source, fetched, prepared.filtered, staged)


def _remember_prepared(run: Run, fetched: FetchedSpec, prepared: Prepared) -> None:
    key = prepared_key(run.inputs, run.source)
    record_prepared(
        run.project, key, fetched.data, prepared.filtered, prepared.warnings, validation=prepared.validation
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
