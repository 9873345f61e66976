"""`python -m codegen <verb>`: the command line over the pipeline.

One top-level handler turns problems into messages and exit statuses
(codegen.errors); tracebacks only with --debug.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from codegen.config import Project, load_source
from codegen.errors import EXIT_CANNOT_RUN, EXIT_OK, CodegenError
from codegen.file_lock import held

ROOT = Path(__file__).resolve().parent.parent
RUN_LOCK = ".codegen.lock"
TREE_VERBS = ("generate", "check", "bump")


def _say(message: str) -> None:
    print(f"codegen: {message}", file=sys.stderr, flush=True)


def _show(message: str) -> None:
    print(message, flush=True)


def cmd_generate(project: Project, args: argparse.Namespace) -> int:
    from codegen.pipeline import build
    from codegen.tree import read_or_none, recover_tree, refuse_symlinks, write_tree

    refuse_symlinks(project.root)
    recover_tree(project.root, _say)
    source = load_source(project)
    result = build(project, source, _say)
    tree_spec = read_or_none(project.spec)
    if tree_spec is not None and tree_spec != result.fetched.data:
        _say(
            f"warning: spec/openapi.yml differed from runtime@{source.short_commit}; it is replaced by the synced copy"
        )
    changed = write_tree(project.root, result.staged)
    if changed:
        _show(f"codegen: wrote {len(changed)} changed path(s) from runtime@{source.short_commit}:")
        for path in changed[:50]:
            _show(f"  {path}")
        if len(changed) > 50:
            _show(f"  ... and {len(changed) - 50} more")
    else:
        _show(f"codegen: up to date with runtime@{source.short_commit}; nothing written")
    return EXIT_OK


def cmd_check(project: Project, args: argparse.Namespace) -> int:
    from codegen.check import run_check

    return run_check(project, _say, _show, args.base)


def cmd_bump(project: Project, args: argparse.Namespace) -> int:
    from codegen.bump import run_bump
    from codegen.tree import recover_tree, refuse_symlinks

    refuse_symlinks(project.root)
    recover_tree(project.root, _say)
    return run_bump(project, args.ref, dry_run=args.dry_run, say=_say, show=_show)


def cmd_rebuild_runtime(project: Project, args: argparse.Namespace) -> int:
    from codegen.upstream_history import build_runtime_repo

    for name, commit in build_runtime_repo(Path(args.dest)):
        _show(f"{commit}  {name}")
    return EXIT_OK


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m codegen", description=__doc__)
    top.add_argument("--debug", action="store_true", help="show tracebacks")
    top.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    verbs = top.add_subparsers(dest="verb", required=True)
    verbs.add_parser("generate", help="regenerate everything from the pinned spec (nox -s codegen)").set_defaults(
        run=cmd_generate
    )
    check = verbs.add_parser("check", help="fail when anything drifted from the pin (nox -s generated-files)")
    check.add_argument(
        "--base",
        metavar="REF",
        help="the revision whose lock may be trusted offline (CI: the pull request's base; "
        "default: the merge base with the default branch)",
    )
    check.set_defaults(run=cmd_check)
    bump = verbs.add_parser("bump", help="move the pin to a runtime ref and report the API change")
    bump.add_argument("ref", help="a runtime commit id (full or abbreviated), tag or branch")
    bump.add_argument("--dry-run", action="store_true", help="print the report, write nothing")
    bump.set_defaults(run=cmd_bump)
    rebuild = verbs.add_parser("rebuild-runtime", help="rebuild the runtime repository's history offline")
    rebuild.add_argument("dest", help="an empty or new folder")
    rebuild.set_defaults(run=cmd_rebuild_runtime)
    return top


class Terminated(KeyboardInterrupt):
    """SIGTERM (what CI runners send on cancel), raised like Ctrl-C so that every clean-up runs."""

    signum = signal.SIGTERM


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise Terminated()


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    project = Project(args.root.resolve())
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminate) if in_main_thread else None
    try:
        if args.verb in TREE_VERBS:
            # One run per tree: the write's renames and the check's reads must not interleave.
            with held(project.root / RUN_LOCK, f"the working tree {project.root}", _say):
                return int(args.run(project, args))
        return int(args.run(project, args))
    except CodegenError as exc:
        for problem in exc.problems:
            print(f"error: {problem.render()}", file=sys.stderr)
        if args.debug:
            raise
        return exc.exit_code
    except KeyboardInterrupt as exc:
        print(f"interrupted: {str(exc) or 'nothing was written'}", file=sys.stderr)
        return 128 + int(getattr(exc, "signum", signal.SIGINT))
    except (ValueError, OSError) as exc:  # e.g. a bad rebuild-runtime destination, a failed write
        if args.debug:
            raise
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_CANNOT_RUN
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
