"""`generate` (nox -s codegen): every step of the pipeline, then the tree written all or nothing."""

from __future__ import annotations

from codegen.config import load_source
from codegen.generation.generators import open_generators
from codegen.messages import Messages
from codegen.tree.write import refuse_symlinks, write_tree
from toolkit.errors import EXIT_OK
from toolkit.paths import SPEC, Project
from toolkit.read import read_or_none
from toolkit.signals import interrupt_behind
from toolkit.transaction import recover_tree

LISTED = 50  # changed paths named one by one; the rest are counted


def run_generate(project: Project, messages: Messages, *, use_cache: bool = True) -> int:
    try:
        return _run_generate(project, messages, use_cache=use_cache)
    except Exception as failed:
        # The signal handler raises wherever the main thread is, and a few places turn that into an
        # error of their own (`type()` wraps one from `__set_name__`, mid-import): it is an interrupt.
        interrupt = interrupt_behind(failed)
        if interrupt is None:
            raise
        raise interrupt from None


def _run_generate(project: Project, messages: Messages, *, use_cache: bool) -> int:
    # The generators start first (a cache folder inside the project is refused there): they import
    # themselves while this process imports the pipeline (GitPython) and fetches.
    with open_generators(project) as generators:
        from codegen.pipeline import build, open_run

        refuse_symlinks(project.root)
        recover_tree(project.root, messages)  # before anything reads the pin, the templates or the contract
        source = load_source(project)
        with open_run(project, source, messages, generators=generators, use_cache=use_cache) as run:
            result = build(run)
    tree_spec = read_or_none(project.spec)
    if tree_spec is not None and tree_spec != result.fetched.data:
        messages.warning(f"{SPEC} differed from runtime@{source.short_commit}; it is replaced by the synced copy")
    with messages.step("write") as note:
        changed = write_tree(project.root, result.staged)
        note(f"{len(changed)} changed path(s)")
    if not changed:
        messages.result(f"up to date with runtime@{source.short_commit}; nothing written")
        return EXIT_OK
    listed = [f"  {path}" for path in changed[:LISTED]]
    if len(changed) > LISTED:
        listed.append(f"  ... and {len(changed) - LISTED} more")
    messages.result("\n".join([f"wrote {len(changed)} changed path(s) from runtime@{source.short_commit}:", *listed]))
    return EXIT_OK
