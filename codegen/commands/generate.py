"""`generate` (nox -s codegen): every step of the pipeline, then the tree written all or nothing."""

from __future__ import annotations

from codegen.config import SPEC, Project, load_source
from codegen.errors import EXIT_OK
from codegen.generation.generators import open_generators
from codegen.messages import Messages
from codegen.tree.read import read_or_none
from codegen.tree.write import recover_tree, refuse_symlinks, write_tree

LISTED = 50  # changed paths named one by one; the rest are counted


def run_generate(project: Project, messages: Messages) -> int:
    refuse_symlinks(project.root)
    # The generators start first (a cache folder inside the project is refused there): they import
    # themselves while this process imports the pipeline (GitPython, jinja, PyYAML) and fetches.
    with open_generators(project) as generators:
        from codegen.pipeline import build

        recover_tree(project.root, messages)
        source = load_source(project)
        result = build(project, source, messages, generators=generators)
    tree_spec = read_or_none(project.spec)
    if tree_spec is not None and tree_spec != result.fetched.data:
        messages.warning(f"{SPEC} differed from runtime@{source.short_commit}; it is replaced by the synced copy")
    with messages.step("write") as used:
        changed = write_tree(project.root, result.staged)
        used(f"{len(changed)} changed path(s)")
    if not changed:
        messages.result(f"up to date with runtime@{source.short_commit}; nothing written")
        return EXIT_OK
    listed = [f"  {path}" for path in changed[:LISTED]]
    if len(changed) > LISTED:
        listed.append(f"  ... and {len(changed) - LISTED} more")
    messages.result("\n".join([f"wrote {len(changed)} changed path(s) from runtime@{source.short_commit}:", *listed]))
    return EXIT_OK
