"""The generated-files check: regenerate from the pin in memory and compare with the tree.

It never writes to the working tree.  Exit statuses: 0 clean, 1 drift, 2 the
check could not run.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from codegen.base_revision import find_base
from codegen.config import Project, load_source
from codegen.errors import EXIT_DRIFT, EXIT_OK
from codegen.pipeline import Say, build
from codegen.transaction import JOURNAL, recover
from codegen.tree import Drift, compare, leftover_drifts, read_or_none, symlink_drifts

DIFF_LINES_PER_FILE = 60
DIFF_LINES_TOTAL = 400

SPEC_REMEDY = (
    "spec/openapi.yml differs from runtime@{short}: land the change upstream first, then `nox -s bump -- <commit>`"
)
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
    "generated folders hold only generated code: move this file out of it (or delete it), "
    "then run `nox -s codegen` and commit the result"
)


def find_drift(project: Project, say: Say, base_ref: str | None = None) -> tuple[list[Drift], str]:
    base = find_base(project, base_ref)
    if base is None:
        say("no base revision (no --base, no default branch to merge-base with): the tree's lock is trusted as is")
    source = load_source(project)
    result = build(project, source, say, base=base)
    drifts: list[Drift] = []
    if result.fetched.origin == "upstream":
        tree_spec = read_or_none(project.spec)
        if tree_spec != result.fetched.data:
            drifts.append(Drift("spec/openapi.yml", "hand-edited spec", result.fetched.data, tree_spec))
        say(f"spec/openapi.yml compared byte for byte with runtime@{source.short_commit}:{source.spec_path}")
    else:
        say(
            f"spec/openapi.yml compared by git blob id with the lock ({result.fetched.blob_id[:12]}), "
            "the upstream being unreachable"
        )
    drifts += compare(project.root, result.staged)
    return drifts, source.short_commit


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
    out += [f"  {d.kind:16} {d.path}" for d in drifts]
    budget = DIFF_LINES_TOTAL
    for drift in drifts:
        diff = _diff_lines(drift)
        if not diff:
            continue
        out.append("")
        if budget <= 0:
            out.append(f"[diff of {drift.path} not shown: the {DIFF_LINES_TOTAL}-line total is used up]")
            continue
        shown = diff[: min(DIFF_LINES_PER_FILE, budget)]
        budget -= len(shown)
        out += [line.rstrip("\n") for line in shown]
        if len(shown) < len(diff):
            out.append(f"[{len(diff) - len(shown)} more diff line(s) of {drift.path} cut]")
    out.append("")
    kinds = {d.kind for d in drifts}
    if "hand-edited spec" in kinds:
        out.append("To fix: " + SPEC_REMEDY.format(short=short_pin or "the pin") + ".")
        out.append("        Never edit spec/openapi.yml here: it is synced from the runtime repository.")
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


def run_check(project: Project, say: Say, show: Say, base_ref: str | None = None) -> int:
    links = symlink_drifts(project.root)
    if links:  # before anything reads the spec, the lock or the contract
        show(render_drift(links, None))
        return EXIT_DRIFT
    recovered = recover(project.root)
    if recovered:
        say(recovered)
    drifts, short_pin = find_drift(project, say, base_ref)
    if recovered:
        drifts.insert(0, Drift(JOURNAL, "interrupted write", None, None))
    drifts += leftover_drifts(project.root)
    if not drifts:
        show(f"generated files: clean (spec, lock, manifest and every generated file match runtime@{short_pin})")
        return EXIT_OK
    show(render_drift(drifts, short_pin))
    return EXIT_DRIFT
