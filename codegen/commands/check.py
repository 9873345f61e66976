"""The generated-files check: regenerate from the pin in memory and compare with the tree.

It never writes to the working tree.  Exit statuses: 0 clean, 1 drift, 2 the
check could not run.  What it trusts comes from the base revision
(codegen/upstream/base_revision.py): with none, nothing vouches for the tree's lock or
`[tool.codegen]`, and it says so (exit 2) unless told `--trust-tree`.  When a
real generation of exactly the same inputs was recorded on this machine
(codegen/generation/cache.py), a tree that matches it is clean without
generating; anything else takes the full run.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from codegen.config import Source, load_source
from codegen.messages import Messages
from codegen.tree.write import Drift, compare_tree, leftover_drifts, symlink_drifts, synced_drifts
from codegen.upstream.base_revision import Base, find_base
from toolkit.cache_folder import cache_root
from toolkit.errors import EXIT_DRIFT, EXIT_OK, Problem, ToolError
from toolkit.paths import ENVD_DIR, SPEC, Project, is_write_target
from toolkit.printable import printable
from toolkit.read import read_or_none
from toolkit.transaction import JOURNAL, recover

if TYPE_CHECKING:
    from codegen.upstream.fetch import FetchedSpec

# Each drift line's own remedy, short; the "To fix:" lines below the diffs say more.
LINE_REMEDIES = {
    "hand-edited spec": "`nox -s codegen` restores it; to change the API, land it upstream, then bump",
    "changed": "`nox -s codegen`, then commit",
    "missing": "`nox -s codegen`, then commit",
    "stale": "`nox -s codegen`, then commit",
    "unexpected": "move it out of the generated folder, or `git rm` it",
    "symlink": "replace it with the file or folder from git, or delete it",
    "leftover": "delete it (`nox -s codegen` does)",
    "interrupted write": "settled as said above: run the check again",
}
DIFF_LINES_PER_FILE = 60
DIFF_LINES_TOTAL = 400

SPEC_REMEDY = SPEC + " differs from runtime@{short}: land the change upstream first, then `nox -s bump -- <commit>`"
GENERATED_REMEDY = "run `nox -s codegen` and commit the result"
SYMLINK_REMEDY = (
    "the check never reads through a symlink: replace each one with the regular file or folder from git "
    "(or delete it), then run `nox -s codegen` and commit the result"
)
INTERRUPTED_REMEDY = (
    "an interrupted codegen write was found and settled as said above, so this run checked a tree "
    "that differs from the one it was given: run the check again"
)
LEFTOVER_REMEDY = "delete these leftovers of an interrupted write (`nox -s codegen` does); they are never committed"
UNEXPECTED_REMEDY = (
    "generated folders hold exactly what the manifest lists, bytecode and dotfiles included: move each "
    "unexpected file out of it (or delete it; `git rm` it when git tracks it), then run `nox -s codegen` "
    "and commit the result"
)


NO_BASE = Problem(
    "no base revision (no --base, and no default branch to merge-base with): the check cannot vouch for the lock, "
    "the pin or [tool.codegen], which the change under review may have written",
    remedy="pass --base REF (in CI the pull request's base, with the full history: fetch-depth 0), "
    "or --trust-tree to trust this tree's lock and [tool.codegen] as they are",
)


def find_drift(
    project: Project, source: Source, fetched: FetchedSpec, messages: Messages, *, use_cache: bool = True
) -> list[Drift]:
    """The full run: every step in memory, then the tree compared with the output."""
    from codegen.pipeline import build, open_run  # the generators and their dependencies: only on a full run

    with open_run(project, source, messages, use_cache=use_cache) as run:
        result = build(run, fetched)
    drifts: list[Drift] = []
    with messages.step("compare") as note:
        tree_spec = read_or_none(project.spec)
        if tree_spec != fetched.data:
            drifts.append(Drift(SPEC, "hand-edited spec", fetched.data, tree_spec))
        if fetched.origin == "upstream":
            note(f"{SPEC} byte for byte with runtime@{source.short_commit}:{source.spec_path}")
        else:
            note(f"{SPEC} byte for byte with the lock's blob ({fetched.blob_id[:12]}), the upstream being unreachable")
        drifts += synced_drifts(project.root, result.staged.synced)
        if result.staged.synced:
            note(f"{len(result.staged.synced)} envd file(s) in {ENVD_DIR}/ byte for byte with the same pin")
        drifts += compare_tree(project.root, result.staged)
        note(f"{len(result.staged.files())} generated path(s)")
    return drifts


def _clean_by_cache(project: Project, source: Source, fetched: FetchedSpec, messages: Messages) -> bool:
    """True when a real generation of exactly these inputs produced exactly what the tree holds."""
    from codegen.generation.cache import generated_from, generation_records, recall, tree_matches
    from codegen.generation.inputs import read_inputs

    with messages.step("cache") as note:
        records = generation_records(project, read_inputs(project))
        recorded = recall(records, generated_from(source, fetched.data, fetched.synced))
        clean = recorded is not None and tree_matches(project.root, recorded, fetched.data)
        if recorded is None:
            note("no generation of these inputs on this machine: the full run follows")
        elif not clean:
            note("the tree differs from the recorded generation: the full run follows, to name each difference")
        else:
            note(f"hit: {len(recorded.files)} file(s) match the recorded generation of these inputs")
    if recorded is not None and clean:
        for warning in recorded.warnings:
            messages.warning(warning)
    return clean


def _diff_lines(drift: Drift) -> list[str]:
    def lines(data: bytes | None) -> list[str]:
        if data is None:
            return []
        try:
            return data.decode("utf-8").splitlines(keepends=True)
        except UnicodeDecodeError:
            return ["<binary content>\n"]

    source = "runtime@pin" if drift.kind == "hand-edited spec" else "generated"
    return list(
        difflib.unified_diff(
            lines(drift.actual),
            lines(drift.expected),
            fromfile=f"{drift.path} (tree)",
            tofile=f"{drift.path} ({source})",
            n=2,
        )
    )


def render_drift(drifts: Sequence[Drift], short_pin: str | None) -> str:
    origin = f" from runtime@{short_pin}" if short_pin else ""
    out: list[str] = [f"{len(drifts)} path(s) drifted{origin}:"]
    # Paths and diffs are data from the tree and the spec: escaped, so that no byte of them
    # moves the cursor or forges a line (each diff line stays one line).
    out += [f"  {d.kind:16} {printable(d.path)}  (fix: {LINE_REMEDIES[d.kind]})" for d in drifts]
    budget = DIFF_LINES_TOTAL
    for drift in drifts:
        diff = _diff_lines(drift)
        if not diff:
            continue
        out.append("")
        if budget <= 0:
            out.append(f"[diff of {printable(drift.path)} not shown: the {DIFF_LINES_TOTAL}-line total is used up]")
            continue
        shown = diff[: min(DIFF_LINES_PER_FILE, budget)]
        budget -= len(shown)
        out += [printable(line.removesuffix("\n")) for line in shown]
        if len(shown) < len(diff):
            out.append(f"[{len(diff) - len(shown)} more diff line(s) of {printable(drift.path)} cut]")
    out.append("")
    kinds = {d.kind for d in drifts}
    if "hand-edited spec" in kinds:
        edited = ", ".join(printable(d.path) for d in drifts if d.kind == "hand-edited spec")
        out.append("To fix: " + SPEC_REMEDY.format(short=short_pin or "the pin").replace(SPEC, edited, 1) + ".")
        out.append(f"        Never edit {edited} here: the spec files are synced from the runtime repository.")
        out.append(f"        `nox -s codegen` restores the pinned {edited}.")
    if kinds & {"changed", "missing", "stale"}:
        out.append("To fix: " + GENERATED_REMEDY + ".")
    if "unexpected" in kinds:
        out.append("To fix: " + UNEXPECTED_REMEDY + ".")
    if "interrupted write" in kinds:
        out.append("To fix: " + INTERRUPTED_REMEDY + ".")
    if "leftover" in kinds:
        out.append("To fix: " + LEFTOVER_REMEDY + ".")
    if "symlink" in kinds:
        out.append("To fix: " + SYMLINK_REMEDY + ".")
    return "\n".join(out)


def run_check(
    project: Project,
    messages: Messages,
    base_ref: str | None = None,
    *,
    use_cache: bool = True,
    trust_tree: bool = False,
) -> int:
    links = symlink_drifts(project.root)
    if links:  # before anything reads the spec, the lock or the contract
        messages.result(render_drift(links, None))
        return EXIT_DRIFT
    recovered = recover(project.root, is_write_target)
    if recovered:
        messages.warning(recovered)
    leftovers = leftover_drifts(project.root)
    cache_root(project)  # refused inside the project, before anything is fetched into it
    base = None if trust_tree else find_base(project, base_ref)
    if trust_tree:
        messages("--trust-tree: no base revision; the tree's lock and [tool.codegen] are trusted as they are")
    elif base is None:
        raise ToolError(NO_BASE)
    _say_client_templates(project, messages)
    source = load_source(project, base=base.settings if base is not None else None)
    fetched = _fetch(project, source, messages, base, fresh=not use_cache)
    # A hand edit to an envd file misses the cache by itself; a file added beside them would not.
    envd_extra = synced_drifts(project.root, {f.path: f.data for f in fetched.synced})
    if (
        use_cache
        and not recovered
        and not leftovers
        and not envd_extra
        and _clean_by_cache(project, source, fetched, messages)
    ):
        messages.result(_clean(source))
        return EXIT_OK
    drifts = find_drift(project, source, fetched, messages, use_cache=use_cache)
    if recovered:
        drifts.insert(0, Drift(JOURNAL, "interrupted write", None, None))
    drifts += leftovers
    if not drifts:
        messages.result(_clean(source))
        return EXIT_OK
    messages.result(render_drift(drifts, source.short_commit))
    return EXIT_DRIFT


def _say_client_templates(project: Project, messages: Messages) -> None:
    """A tree (`--root`) whose templates/client/ is not this checkout's: the check renders its own, and says so."""
    from codegen.generation.inputs import client_templates_differ

    differ = client_templates_differ(project)
    if differ:
        shown = ", ".join(printable(rel) for rel in differ[:5]) + (
            f" and {len(differ) - 5} more" if len(differ) > 5 else ""
        )
        messages.warning(
            f"the tree's templates/client/ differs from this checker's ({shown}): the client templates are code, "
            "so the check renders its own; what the tree's would generate is for the pull request's own CI run"
        )


def _clean(source: Source) -> str:
    return f"clean: the spec, lock, manifest and every generated file match runtime@{source.short_commit}"


def _fetch(project: Project, source: Source, messages: Messages, base: Base | None, *, fresh: bool) -> FetchedSpec:
    from codegen.upstream.fetch import fetch_spec

    return fetch_spec(project, source, messages, base, fresh=fresh)  # fresh: `--no-cache` trusts no cached repository
