"""`generate` (nox -s codegen): every step of the pipeline, then the tree written all or nothing.

The generators start first, and on a warm run get their spec first too: the filtered spec an
earlier run on this machine made of the pinned commit (codegen/generation/cache.py), handed to
them before the pipeline is even imported.  The pipeline's imports (GitPython, PyYAML) and the
fetch then wait for the core the first generator to finish frees, instead of taking theirs, and
the fetch decides whether that spec stands (codegen/pipeline.py).
"""

from __future__ import annotations

import codegen
from codegen.config import load_source
from codegen.generation.generators import filtered_json, open_generators
from codegen.messages import Messages
from toolkit.errors import EXIT_OK, interrupt_behind
from toolkit.paths import SPEC, Project
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
    # themselves while this process prepares their spec, so even its own imports wait until then.
    with open_generators(project) as generators:
        from codegen.generation.cache import prepared_key, recall_prepared
        from codegen.generation.inputs import read_inputs
        from codegen.generation.stage import start_tree
        from codegen.tree.write import refuse_symlinks, write_tree
        from toolkit.read import read_or_none

        refuse_symlinks(project.root)
        recover_tree(project.root, messages)  # before anything reads the pin, the templates or the contract
        source = load_source(project)
        inputs = read_inputs(project, imported_ns=codegen.LOADED_NS)
        prepared = recall_prepared(project, prepared_key(inputs, source)) if use_cache else None
        if prepared is not None:
            start_tree(generators, inputs, filtered_json(prepared.filtered))
            generators.first_finished()  # the pipeline's imports and the fetch take the core it frees, not theirs
        from codegen.pipeline import Run, build

        result = build(Run(project, source, messages, generators, inputs, use_cache), prepared)
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
