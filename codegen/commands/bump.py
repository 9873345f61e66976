"""`bump <ref>`: move spec/runtime-ref to a runtime ref, regenerate, and report the API change.

How it works, and why: docs/maintainers/design.md, "codegen/commands/bump.py".
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import git

from codegen.api_changes.compare import compare_specs
from codegen.api_changes.envd_files import EnvdReport, compare_envd, envd_fragment_lines, render_envd_section
from codegen.api_changes.generated_names import parser_records
from codegen.api_changes.report import LEVELS, ApiChangeReport, Level, render_fragment, render_report, sort_key
from codegen.commands.handwritten import SECTION_TITLE, Verdict, generated_unchanged, handwritten_check
from codegen.config import FULL_COMMIT, PinFrom, Source, load_source, read_pin
from codegen.contract import REMEDY as CONTRACT_REMEDY
from codegen.contract import credential_schemes, load_contract
from codegen.envd.contract import REMEDY as ENVD_CONTRACT_REMEDY
from codegen.messages import Messages
from codegen.openapi.document import SpecDocument, read_spec, validation_problems
from codegen.openapi.operation_map import REMEDY as OPERATION_MAP_REMEDY
from codegen.openapi.operation_map import load_operation_map
from codegen.openapi.sdk_filter import filter_spec
from codegen.pipeline import Build, ReadSpec, build, open_run, parse_spec
from codegen.tree.write import refuse_symlinks, write_tree
from codegen.upstream.fetch import (
    FetchedSpec,
    MissingRef,
    Unreachable,
    UpstreamRepository,
    fetch_configured_branch,
    fetch_spec,
    tracked_envd_if_locked,
)
from codegen.upstream.spec_lock import git_blob_id, read_lock
from toolkit.changelog import BUMP_TYPES
from toolkit.errors import EXIT_HANDWRITTEN, EXIT_OK, Problem, ToolError
from toolkit.paths import GENERATED_ROOTS, PACKAGES_DIR, RUNTIME_REF, SPEC, Project, fragment_path
from toolkit.printable import Say, printable
from toolkit.read import read_or_none
from toolkit.runtime_record import PinRecord, chain_to, read_records, stray_remedy
from toolkit.transaction import recover_tree

if TYPE_CHECKING:
    from codegen.generation.generators import Toolchain
    from python_api.compare import ApiDiff

# The report is a towncrier fragment whose type is the release's semver level
# (types: toolkit/changelog.py); "+" keeps the name out of the changelog.
_LEVEL_RANK = {"none": 0, "patch": 1, "minor": 2, "major": 3}
# Branch, tag or (abbreviated) commit names: no leading '-', no ranges, no reflog
# syntax, no revision operators, nothing git could read as an option or a refspec.
_REF = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,199}")
_HEX = re.compile(r"[0-9a-f]{4,40}")


def check_ref_text(ref: str) -> str:
    why = None
    if not ref:
        why = "the ref is empty"
    elif not ref.isprintable() or any(c.isspace() for c in ref):
        why = f"the ref {ref!r} contains control characters or spaces"
    elif ref.startswith("-"):
        why = f"the ref {ref!r} starts with '-' and would be read as an option"
    elif ".." in ref or "@{" in ref or ref.endswith((".lock", "/", ".")) or "//" in ref:
        why = f"the ref {ref!r} is a revision range or expression, not a name"
    elif not _REF.fullmatch(ref):
        why = f"the ref {ref!r} is not a plain branch, tag or commit name"
    if why:
        raise ToolError(
            Problem(
                why,
                remedy="name one runtime commit: a commit id (full or abbreviated), a tag or a branch",
            )
        )
    return ref


def resolve_ref(upstream: UpstreamRepository, ref: str, branch: str) -> tuple[str, str]:
    """(full commit id, what the ref was: tag, branch or commit)."""
    candidates: list[tuple[str, str]] = [
        (f"refs/upstream/tags/{ref}", "tag"),
        (f"refs/upstream/heads/{ref}", "branch"),
    ]
    if _HEX.fullmatch(ref):
        candidates.append((ref, "commit"))
    for name, kind in candidates:
        commit = upstream.peel_commit(name)
        if commit is None:
            kind_of = upstream.object_type(name)
            if kind_of in ("tree", "blob"):
                raise ToolError(Problem(f"{ref!r} names a {kind_of}, not a commit", remedy="name a runtime commit"))
            continue
        if FULL_COMMIT.fullmatch(commit):
            return commit, kind
    if FULL_COMMIT.fullmatch(ref) and upstream.try_fetch_commit(ref):
        return ref, "commit"
    raise ToolError(
        Problem(
            f"{ref!r} is not a tag, branch or commit of the runtime repository ({upstream.url})",
            remedy="check the name; `git ls-remote` on the runtime repository lists tags and branches",
        )
    )


def old_pin_spec(project: Project, upstream: UpstreamRepository, current: Source, say: Say) -> bytes:
    """The spec the report compares with: the one at the old pin, not whatever the tree holds.

    An upstream may not hold the old pin (a mirror, a rewritten history, a move
    to another repository); then the tracked spec stands in, but only when its
    git blob id is the one the lock recorded for that pin.
    """
    if upstream.has_commit(current.commit) or upstream.try_fetch_commit(current.commit):
        try:
            found = upstream.read_file(current.commit, current.spec_path)
        except (ValueError, git.GitError):
            found = None  # an unreadable object: treated like an absent one
        if found is not None:
            return found[0]
    lock = read_lock(project)
    tracked = read_or_none(project.spec)
    blob = git_blob_id(tracked) if tracked is not None else None
    why = lock.why_not_for(current.commit, current.spec_path)
    if why is None and blob != lock.blob:
        why = (
            f"{SPEC} is missing"
            if blob is None
            else f"{SPEC} (blob {blob[:12]}) differs from the lock (blob {lock.blob[:12]})"
        )
    if why is not None or tracked is None or blob is None:  # (the last two: only for the type checker)
        raise ToolError(
            Problem(
                f"the old pin runtime@{current.short_commit} ({current.spec_path}) is not in {upstream.url}, "
                f"and the tracked spec cannot stand in for it: {why}",
                where=RUNTIME_REF,
                remedy=f"restore {SPEC} and the lock from git, or bump with E2B_RUNTIME_REPO naming "
                "an upstream that holds the old pin",
            )
        )
    say(
        f"runtime@{current.short_commit} is not in {upstream.url}: the report's old side is the tracked "
        f"{SPEC}, whose blob id ({blob[:12]}) matches the lock"
    )
    return tracked


def pending_record(project: Project, pin: str) -> PinRecord | None:
    """The pending fragment that set `pin`, which this bump replaces; refused: fragments that do not chain to it."""
    chain = chain_to(read_records(project.root), pin)
    if chain.stray:
        raise ToolError(
            *(Problem("does not chain to the current pin", where=r.path, remedy=stray_remedy(pin)) for r in chain.stray)
        )
    return chain.last if chain.last is not None and chain.last.start is not None else None


def record_start(
    upstream: UpstreamRepository, record: PinRecord | None, current: Source, say: Say
) -> tuple[Source, PinRecord | None]:
    """Where this bump's record starts (the pending fragment's start, else the current pin), and what it replaces.

    An upstream that does not hold the pending record's start (a mirror, a rewritten history) cannot
    give the report its old side: the pending fragment stays, and this bump's record starts at the pin.
    """
    if record is None or record.start is None:
        return current, None
    commit = upstream.peel_commit(record.start)
    if commit is None or not commit.startswith(record.start) or not FULL_COMMIT.fullmatch(commit):
        say(
            f"{record.path} records the change from runtime@{record.start[:7]}, which {upstream.url} does not "
            f"hold: kept, and this bump records the change from runtime@{current.short_commit} beside it"
        )
        return current, None
    say(f"{record.path} records the change from runtime@{commit[:7]}: this bump replaces it")
    return replace(current, commit=commit), record


@dataclass(frozen=True)
class _Move:
    """Where a bump moves the pin, and what its record of the change replaces."""

    upstream: UpstreamRepository
    current: Source  # the pin now
    start: Source  # where the record starts: the pending fragment's start, else the pin
    target: Source  # the new pin
    record: PinRecord | None  # the pending fragment this bump replaces

    @property
    def refs(self) -> dict[str, str]:
        return {"old_ref": f"runtime@{self.start.short_commit}", "new_ref": f"runtime@{self.target.short_commit}"}


@dataclass(frozen=True)
class _Report:
    """What a bump found: the HTTP API's changes, the data plane's, the Python API's, and the hand-written code's."""

    changes: ApiChangeReport
    envd: EnvdReport | None
    diffs: list[ApiDiff]
    python_level: str
    handwritten: Verdict
    text: str  # the report as printed: the HTTP API, the data plane and the Python API sections

    @property
    def level(self) -> Level:
        envd_level: Level = self.envd.level if self.envd is not None else "none"
        return _highest(self.changes.level, self.python_level, envd_level)

    @property
    def whole(self) -> str:
        """The whole report (the section to act on first): the release pull request's body."""
        return (self.handwritten.section + "\n" if self.handwritten.broken else "") + self.text

    @property
    def exit_status(self) -> int:
        return EXIT_HANDWRITTEN if self.handwritten.broken else EXIT_OK

    @property
    def broken(self) -> str:
        return (
            f"the regenerated client leaves {len(self.handwritten.breakages)} place(s) of this repository's code "
            f"broken (see {SECTION_TITLE.removeprefix('## ')!r} above, exit {EXIT_HANDWRITTEN})"
        )


def run_bump(
    project: Project,
    ref: str,
    *,
    dry_run: bool,
    messages: Messages,
    generators: Toolchain | None = None,
    report_file: Path | None = None,
) -> int:
    """Check the inputs, resolve the ref, report the API change, regenerate and check, then write the move.

    Read top to bottom, one phase a function: nothing is written before `_write_move`.
    """
    _check_inputs(project, ref, report_file, messages)
    move = _resolve_move(project, ref, messages)
    if move is None:
        return EXIT_OK
    fetched = fetch_spec(project, move.target, messages)
    # Read here, validated by the pipeline beside the generators (the report needs only the structure
    # read_spec bounds); a spec the report cannot read is validated first, so its problems are said.
    document = parse_spec(move.target, fetched, messages, validate=False)
    # The report comes before the contract and the generators: when they refuse
    # this commit, the report is what says why.
    changes = _http_api_changes(project, move, document, messages)
    report = render_report(changes, **move.refs)
    messages.show(report)
    envd = _envd_changes(project, move, fetched, messages)
    envd_level: Level = envd.level if envd is not None else "none"
    if envd is not None:
        envd_section = render_envd_section(envd, new_ref=move.refs["new_ref"], http_level=changes.level)
        messages.show(envd_section)
        report += "\n" + envd_section
    # The Python API's old side: the code generated at the record's start (in memory), when that is not the tree's.
    old_generated = start_generated(project, move.start, messages) if move.start.commit != move.current.commit else None
    result = _regenerate(project, move, ReadSpec(fetched, document), messages, generators, changes, envd)
    found = _check_code(project, move, result, old_generated, report, changes, envd, envd_level, messages)
    if dry_run:
        _write_report(report_file, found.whole)
        written = "--dry-run: nothing written"
        messages.result(f"{written}; {found.broken}" if found.handwritten.broken else written)
        return found.exit_status
    _write_move(project, move, result, found, report_file, messages)
    return found.exit_status


def _check_inputs(project: Project, ref: str, report_file: Path | None, messages: Messages) -> None:
    """The ref's text and the report's path; no symlink where bump reads; a tree no run left half written."""
    check_ref_text(ref)
    if report_file is not None:
        _check_report_path(report_file)
    refuse_symlinks(project.root)
    recover_tree(project.root, messages)


def _resolve_move(project: Project, ref: str, messages: Messages) -> _Move | None:
    """The pin now, the pending record, the ref resolved on the runtime's branch; None: the pin is there already."""
    current = load_source(project, commit=read_pin(project))
    record = pending_record(project, current.commit)
    upstream = UpstreamRepository(current.url)
    with messages.step("fetch") as note:
        branch_ref = _fetch_refs(upstream, current, ref)
        commit, kind = resolve_ref(upstream, ref, current.branch)
        note(f"{current.branch} and tags from {current.url}")
    messages(f"{ref!r} is {kind} -> commit {commit}")
    if commit == current.commit:
        messages.result(f"{RUNTIME_REF} already pins {commit}; nothing to do")
        return None
    if not upstream.is_ancestor(commit, branch_ref):
        raise ToolError(
            Problem(
                f"commit {commit} is not reachable from the runtime's {current.branch!r} branch",
                remedy=f"pin only commits merged into {current.branch}",
            )
        )
    if upstream.is_ancestor(commit, current.commit):
        messages.warning(f"{commit[:7]} is older than the current pin {current.short_commit}: this is a downgrade")
    start, record = record_start(upstream, record, current, messages)
    target = replace(current, commit=commit, pin_from=PinFrom.BUMP)
    return _Move(upstream, current, start, target, record)


def _http_api_changes(project: Project, move: _Move, document: SpecDocument, messages: Messages) -> ApiChangeReport:
    """The report's HTTP API part: the SDK's view of the spec at the record's start against the new pin's."""
    start, target = move.start, move.target
    with messages.step("report") as note, _invalid_spec_first(document):
        operations = load_operation_map(project.operations, display_path=project.relative(project.operations))
        old_bytes = old_pin_spec(project, move.upstream, start, messages)
        # Read, not validated: the old pin's spec passed the validator when it was pinned, and the
        # report needs only its structure, which read_spec bounds as it does for any spec.
        old_spec = read_spec(old_bytes, display_path=f"runtime@{start.short_commit}:{start.spec_path}")
        old = filter_spec(old_spec.data, tags=start.sdk_tags, operations=operations)
        new = filter_spec(document.data, tags=target.sdk_tags, operations=operations)
        # The contract is checked on the new spec by the pipeline below; here it names the SDK's credential.
        credentials = credential_schemes(load_contract(project.contract))
        changes = compare_specs(old, new, credentials=credentials, records=parser_records(project))
        note(f"runtime@{start.short_commit} -> runtime@{target.short_commit}: {changes.level}")
    return changes


def _envd_changes(project: Project, move: _Move, fetched: FetchedSpec, messages: Messages) -> EnvdReport | None:
    """The data plane's files at the record's start and at the new pin, graded (None: no envd file changed).

    Before the envd lane and its contract run: when they refuse the commit, the section is what says why.
    """
    refs = move.refs
    with messages.step("envd diff") as note:
        paths = move.target.envd_files + move.current.envd_files
        old_envd = _envd_files_at(project, move.upstream, move.start, paths)
        envd = compare_envd(old_envd, fetched.synced, old_ref=refs["old_ref"], records=parser_records(project))
        envd_level: Level = envd.level if envd is not None else "none"
        note(f"{refs['old_ref']} -> {refs['new_ref']}: {envd_level}" if envd is not None else "no envd file changed")
    return envd


def _regenerate(
    project: Project,
    move: _Move,
    spec: ReadSpec,
    messages: Messages,
    generators: Toolchain | None,
    changes: ApiChangeReport,
    envd: EnvdReport | None,
) -> Build:
    """The pipeline on the new pin's spec; a refusal names the change in the report that caused it."""
    try:
        with open_run(project, move.target, messages, generators=generators) as run:
            return build(run, spec)
    except ToolError as exc:
        raise ToolError(*(_explained(problem, changes, move.target, envd) for problem in exc.problems)) from None


def _check_code(
    project: Project,
    move: _Move,
    result: Build,
    old_generated: Mapping[str, bytes] | None,
    report: str,
    changes: ApiChangeReport,
    envd: EnvdReport | None,
    envd_level: Level,
    messages: Messages,
) -> _Report:
    """The Python API section (griffe) and this repository's own code against the regenerated client, side by side."""
    with handwritten_check(project, result.staged.generated, messages) as pending:
        with messages.step("python api") as note:
            # Unchanged generated files change no package's Python API: griffe has nothing to compare.
            if old_generated is not None:
                same = old_generated == result.staged.generated
                diffs = [] if same else python_api_diffs(project, result.staged.generated, old_generated)
                against = f"the code generated at runtime@{move.start.short_commit}"
            else:
                same = generated_unchanged(project, result.staged.generated)
                diffs = [] if same else python_api_diffs(project, result.staged.generated)
                against = "the tree"
            python_section, python_level = render_python_api(diffs, _highest(changes.level, envd_level))
            note("the generated files are unchanged" if same else f"the regenerated code against {against} (griffe)")
            note(python_level)
        handwritten = pending.verdict(changes, [verdict for diff in diffs for verdict in diff.breaks])
    messages.show(python_section)
    if handwritten.broken:
        messages.show(handwritten.section)
    return _Report(changes, envd, diffs, python_level, handwritten, report + "\n" + python_section)


def _write_move(
    project: Project, move: _Move, result: Build, found: _Report, report_file: Path | None, messages: Messages
) -> None:
    """The pin, the regenerated files and the record (the fragment, replacing the pending one), in one transaction."""
    start, commit, record = move.start, move.target.commit, move.record
    # Back at the pin the record started at: the change nets to nothing, and nothing is recorded.
    fragment = fragment_path(start.commit, commit, found.level) if commit != start.commit else None
    extra: dict[str, bytes | None] = {RUNTIME_REF: f"{commit}\n".encode()}
    if record is not None:
        extra[record.path] = None
    if fragment is not None:
        from python_api.compare import render as render_python

        python_lines = [f"- {d.package}'s Python API, {line[2:]}" for d in found.diffs for line in render_python(d)]
        envd_lines = envd_fragment_lines(found.envd) if found.envd is not None else []
        text = render_fragment(
            found.changes, **move.refs, level=found.level, python_lines=python_lines, envd_lines=envd_lines
        )
        extra[fragment] = text.encode()
    with messages.step("write") as note:
        written = write_tree(project.root, result.staged, extra=extra)
        note(f"{len(written)} path(s)")
    _write_report(report_file, found.whole)
    recorded = (
        f"the change from runtime@{start.short_commit} in {fragment}"
        if fragment is not None
        else f"back at runtime@{start.short_commit}, where the pending record started: no fragment"
    )
    replaced = f" (replacing {record.path})" if record is not None and fragment is not None else ""
    removed = f" (removed {record.path})" if record is not None and fragment is None else ""
    messages.result(
        f"pinned runtime@{move.target.short_commit}; wrote {len(written)} path(s), {recorded}{replaced}{removed}\n"
        + (f"{found.broken}: fix them, then commit them with" if found.handwritten.broken else "commit")
        + " the pin, spec, lock, generated code and the fragment in one pull request"
    )


def _check_report_path(path: Path) -> None:
    """Before anything is written: a report that could not be written would leave the tree written without it."""
    why = None
    if path.is_dir():
        why = "is a folder"
    elif not path.parent.is_dir():
        why = "is in a folder that does not exist"
    elif not os.access(path.parent, os.W_OK):
        why = "is in a folder this user cannot write"
    if why is not None:
        raise ToolError(Problem(f"--report {printable(str(path))} {why}", remedy="name a file in a writable folder"))


def _write_report(path: Path | None, text: str) -> None:
    """The whole report into `path` (`--report`), whole or not at all: the release pull request's body."""
    if path is None:
        return
    scratch = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        scratch.write_text(text, encoding="utf-8")
        os.replace(scratch, path)
    except OSError as exc:
        scratch.unlink(missing_ok=True)
        raise ToolError(
            Problem(f"cannot write the report to {printable(str(path))}: {exc.strerror}", remedy="name a writable file")
        ) from None


def python_api_section(project: Project, generated: Mapping[str, bytes], http_level: str) -> tuple[str, str]:
    """The report's "Python API" section: what the regenerated code changes for importers, and its level.

    The fragment's type is the higher of the two levels: a renamed model field
    breaks `e2b.api.client` importers even when the HTTP API only gained a name.
    """
    return render_python_api(python_api_diffs(project, generated), http_level)


def python_api_diffs(
    project: Project, generated: Mapping[str, bytes], old_generated: Mapping[str, bytes] | None = None
) -> list[ApiDiff]:
    """Each package's Python API, the tree against the tree with `generated` in place (griffe); changed ones only.

    `old_generated`: the old side is the tree with those in place instead (a copy of its packages).
    griffe's reading of each side is remembered by the files it read (`api_records`): a bump of a tree
    read before (after a --dry-run, a fix, or the bump that made the tree) runs griffe on neither side.
    """
    from python_api.compare import api_records, diff_generated

    with tempfile.TemporaryDirectory(prefix="e2b-bump-start-") as scratch:
        root = project.root if old_generated is None else _packages_with(project.root, Path(scratch), old_generated)
        diffs = diff_generated(root, generated, GENERATED_ROOTS, records=api_records(project))
    return [d for d in diffs if d.breaks or d.added]


def start_generated(project: Project, start: Source, messages: Messages) -> dict[str, bytes]:
    """The code the record's start pin generates now (the spec at that pin, today's pipeline), in memory."""
    messages(f"the generated code at runtime@{start.short_commit}, where the record starts: the Python API's old side")
    fetched = fetch_spec(project, start, messages)
    document = parse_spec(start, fetched, messages, validate=False)
    try:
        with open_run(project, start, messages) as run:
            return dict(build(run, ReadSpec(fetched, document)).staged.generated)
    except ToolError as exc:
        why = Problem(
            f"runtime@{start.short_commit}, where the pending record starts, no longer generates (below): "
            "the Python API cannot be compared with it",
            remedy="delete the pending bump fragment (the record then starts at the current pin), then bump again",
        )
        raise ToolError(why, *exc.problems) from None


def _packages_with(root: Path, scratch: Path, generated: Mapping[str, bytes]) -> Path:
    """A copy of the tree's packages under `scratch`, their generated folders holding `generated`."""
    shutil.copytree(
        root / PACKAGES_DIR, scratch / PACKAGES_DIR, symlinks=True, ignore=shutil.ignore_patterns("__pycache__")
    )
    for folder in GENERATED_ROOTS:
        shutil.rmtree(scratch / folder, ignore_errors=True)
    for rel, data in generated.items():
        (scratch / rel).parent.mkdir(parents=True, exist_ok=True)
        (scratch / rel).write_bytes(data)
    return scratch


def render_python_api(diffs: list[ApiDiff], http_level: str) -> tuple[str, str]:
    """The "Python API" section of `diffs`, and its level."""
    from python_api.compare import render

    level = max((d.level for d in diffs), key=_LEVEL_RANK.__getitem__, default="none")
    lines = ["## Python API (what importers see)", ""]
    if not diffs:
        lines.append("No change to the public Python API of any package.")
    for diff in diffs:
        lines += [f"{diff.package}: **{diff.level}** ({len(diff.breaks)} break(s), {len(diff.added)} addition(s))"]
        lines += [*render(diff), ""]
    if _LEVEL_RANK[level] > _LEVEL_RANK[http_level]:
        lines.append(f"The fragment's type follows the Python API: `{BUMP_TYPES[level]}`.")
    return "\n".join(lines).rstrip("\n") + "\n", level


@contextmanager
def _invalid_spec_first(document: SpecDocument) -> Iterator[None]:
    """An error in the block, on a spec the validator has not passed yet: the validator's problems, if any."""
    try:
        yield
    except Exception:
        problems = validation_problems(document)
        if problems:
            raise ToolError(*problems) from None
        raise


def _fetch_refs(upstream: UpstreamRepository, current: Source, ref: str) -> str:
    """The configured branch, the tags, and `ref` if it is another branch; the branch's local ref."""
    try:
        branch_ref = fetch_configured_branch(upstream, current)
        upstream.fetch_tags()
        if not _HEX.fullmatch(ref) and ref != current.branch:
            try:
                upstream.fetch(f"+refs/heads/{ref}:refs/upstream/heads/{ref}")
            except MissingRef:
                pass  # not a branch; maybe a tag or a commit
    except Unreachable as exc:
        raise ToolError(
            Problem(
                f"the runtime repository {current.url} cannot be reached: {exc}",
                remedy="bumping needs the upstream; set E2B_RUNTIME_REPO to a reachable mirror or checkout",
            )
        ) from None
    return branch_ref


def _explained(problem: Problem, changes: ApiChangeReport, target: Source, envd: EnvdReport | None) -> Problem:
    """A refusal during a bump: the change in the report that caused it, and a remedy that fits a bump."""
    if problem.remedy == ENVD_CONTRACT_REMEDY and envd is not None:
        return _envd_explained(problem, envd, target)
    if problem.remedy not in (CONTRACT_REMEDY, OPERATION_MAP_REMEDY):
        return problem
    remedy = (
        f"runtime@{target.short_commit} lacks what the SDK needs: pick a later commit, or land the change "
        "upstream first"
    )
    if problem.remedy == OPERATION_MAP_REMEDY:
        remedy += "; if the operation moved, point its spec/operations.yml entry at where it is now"
    pointer = problem.where.rsplit("(", 1)[-1].rstrip(")") if problem.where else ""
    segments = pointer.split("/")
    prop = segments[segments.index("properties") + 1] if "properties" in segments[:-1] else None
    # The SDK's credential (/components/securitySchemes/NAME): the report names it at the end of a location.
    scheme = segments[3] if segments[1:3] == ["components", "securitySchemes"] and len(segments) == 4 else None
    for change in changes.changes:
        if (
            (change.detail and change.detail in problem.message)
            or (prop and change.location.endswith(f".{prop}"))
            or (scheme and change.kind.startswith("security") and change.location.endswith(f" {scheme}"))
        ):
            message = f"{problem.message}; {change.kind} by this commit (see the report: `{change.location}`)"
            return replace(problem, message=message, remedy=remedy)
    return replace(problem, remedy=remedy)


def _envd_explained(problem: Problem, envd: EnvdReport, target: Source) -> Problem:
    """A data-plane contract miss: the envd change that caused it (an RPC or service the miss names)."""
    remedy = (
        f"runtime@{target.short_commit} lacks what the SDK's data plane needs: pick a later commit, or land "
        "the change upstream first"
    )
    said = problem.message.split(";", 1)[0]
    for change in sorted(envd.protos.changes + envd.http.changes, key=sort_key):
        if re.search(rf"(?<![\w.]){re.escape(change.location)}(?![\w/])", said):
            message = f"{problem.message}; {change.kind} by this commit (see the report: `{change.location}`)"
            return replace(problem, message=message, remedy=remedy)
    return replace(problem, remedy=remedy)


def _envd_files_at(
    project: Project, upstream: UpstreamRepository, start: Source, paths: tuple[str, ...]
) -> dict[str, bytes | None]:
    """Each envd path's bytes at the record's start (None: not a file there): the data plane's old side.

    An upstream without that commit is the case `old_pin_spec` allows when the lock vouches for the
    tracked spec: the tracked envd files stand in the same way, when the envd lock vouches for them.
    """
    if not upstream.has_commit(start.commit):
        unreachable = f"runtime@{start.short_commit} is not in {upstream.url}"
        tracked = {f.path: f.data for f in tracked_envd_if_locked(project, start, unreachable)}
        return {path: tracked.get(path) for path in dict.fromkeys(paths)}
    files: dict[str, bytes | None] = {}
    for path in dict.fromkeys(paths):
        found = upstream.read_file(start.commit, path)
        files[path] = found[0] if found is not None else None
    return files


def _highest(*levels: str) -> Level:
    """The highest of `levels` (each one of LEVELS: the Python API's is typed as a plain string)."""
    highest = max(levels, key=_LEVEL_RANK.__getitem__)
    return next(level for level in LEVELS if level == highest)
