"""`python -m codegen <verb>`: the command line over the pipeline, one module per verb.

`generate` (codegen/commands/generate.py), `check` (codegen/commands/check.py), `bump`
(codegen/commands/bump.py), `rebuild-runtime` (codegen/upstream/history.py).  One
top-level handler turns problems into messages and exit statuses
(toolkit.errors); tracebacks only with --debug.
"""

from __future__ import annotations

import argparse
import functools
import signal
import sys
import sysconfig
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType

from codegen.messages import Messages
from codegen.tree.file_lock import held
from toolkit.errors import EXIT_CANNOT_RUN, EXIT_OK, ToolError
from toolkit.paths import Project
from toolkit.signals import Terminated, note_lost_signal, take_lost_signals
from toolkit.transaction import finished_writes

ROOT = Path(__file__).resolve().parent.parent
RUN_LOCK = ".codegen.lock"
TREE_VERBS = ("generate", "check", "bump")


def cmd_generate(project: Project, args: argparse.Namespace, messages: Messages) -> int:
    from codegen.commands.generate import run_generate

    return run_generate(project, messages, use_cache=not args.no_cache)


def cmd_check(project: Project, args: argparse.Namespace, messages: Messages) -> int:
    from codegen.commands.check import run_check

    return run_check(project, messages, args.base, use_cache=not args.no_cache, trust_tree=args.trust_tree)


def cmd_bump(project: Project, args: argparse.Namespace, messages: Messages) -> int:
    from codegen.generation.generators import open_generators

    # As for generate: the generators import themselves while bump imports, fetches and reports.
    with open_generators(project) as generators:
        from codegen.commands.bump import run_bump

        return run_bump(
            project, args.ref, dry_run=args.dry_run, messages=messages, generators=generators, report_file=args.report
        )


def cmd_rebuild_runtime(project: Project, args: argparse.Namespace, messages: Messages) -> int:
    from codegen.upstream.history import build_runtime_repo

    built = build_runtime_repo(Path(args.dest), project.root / "spec" / "upstream-history")
    messages.result("\n".join([f"rebuilt the runtime repository in {args.dest}:", *(f"  {c}  {n}" for n, c in built)]))
    return EXIT_OK


DESCRIPTION = """\
Generate the E2B API client from the runtime's OpenAPI spec, check that the
tree is what the pinned spec produces, and move the pin.  Usually run through
nox, which installs what it needs: `nox -s codegen`, `nox -s generated-files`,
`nox -s bump -- <ref>`.

Exit statuses: 0 success (check: clean), 1 drift (check only), 2 could not run,
3 bump wrote the new pin but hand-written code does not work with the regenerated client.
"""
EPILOG = """\
example:
  python -m codegen check                      # is the tree what the pin produces?
"""


def _verb(
    verbs: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    summary: str,
    description: str,
    example: str,
    common: argparse.ArgumentParser,
) -> argparse.ArgumentParser:
    return verbs.add_parser(
        name,
        help=summary,
        description=description,
        epilog=f"example:\n  {example}",
        parents=[common],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def parser() -> argparse.ArgumentParser:
    # Accepted before and after the verb (nox passes its arguments after it); the
    # verb's copies default to SUPPRESS so that they never reset the top level's.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--quiet", "-q", action="store_true", default=argparse.SUPPRESS, help="print only problems and the verdict"
    )
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")
    top = argparse.ArgumentParser(
        prog="python -m codegen",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    top.add_argument("--quiet", "-q", action="store_true", help="print only problems and the verdict")
    top.add_argument("--debug", action="store_true", help="show tracebacks")
    top.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    verbs = top.add_subparsers(dest="verb", required=True, metavar="VERB")
    generate = _verb(
        verbs,
        "generate",
        "regenerate everything from the pinned spec and write it (nox -s codegen)",
        "Fetch the spec at spec/runtime-ref, check it against spec/contract.yml and spec/operations.yml,\n"
        "generate the client, the wire models and the overlays, and write whatever changed, all or nothing.\n"
        "Each step prints how long it took and what it used.",
        "python -m codegen generate",
        common,
    )
    generate.add_argument(
        "--no-cache",
        action="store_true",
        help="fetch and validate the spec afresh; never start from what this machine kept",
    )
    generate.set_defaults(run=cmd_generate)
    check = _verb(
        verbs,
        "check",
        "fail when anything differs from what the pin produces; writes nothing (nox -s generated-files)",
        "Compare the spec, the lock, the manifest and every generated file with what the pinned spec\n"
        "produces, and name each difference with its remedy.  Exit 0 clean, 1 drift, 2 could not run.\n"
        "When this machine generated exactly these inputs before, a matching tree is clean without\n"
        "generating again; --no-cache forces the full run (the required CI check passes it).",
        "python -m codegen check --base origin/main",
        common,
    )
    trusted = check.add_mutually_exclusive_group()
    trusted.add_argument(
        "--base",
        metavar="REF",
        help="the revision whose [tool.codegen] names the upstream and whose lock may be trusted when it is "
        "unreachable (CI: the pull request's base; default: the merge base with the default branch)",
    )
    trusted.add_argument(
        "--trust-tree",
        action="store_true",
        help="no base revision: trust this tree's lock and [tool.codegen] as they are (a tree without git history)",
    )
    check.add_argument(
        "--no-cache", action="store_true", help="always regenerate in memory; never answer from the cache"
    )
    check.set_defaults(run=cmd_check)
    bump = _verb(
        verbs,
        "bump",
        "move the pin to a runtime ref, regenerate, and report the API change (nox -s bump -- REF)",
        "Resolve REF in the runtime repository, print the API change report against the current pin,\n"
        "then regenerate and write the pin, spec, lock, generated files and a changelog fragment\n"
        "in one step.  --dry-run prints the report and writes nothing.",
        "python -m codegen bump v1.2.0 --dry-run",
        common,
    )
    bump.add_argument("ref", help="a runtime commit id (full or abbreviated), tag or branch")
    bump.add_argument("--dry-run", action="store_true", help="print the report, write nothing")
    bump.add_argument(
        "--report",
        type=Path,
        metavar="FILE",
        help="also write the whole report there (the release pull request's body; the fragment is a short list)",
    )
    bump.set_defaults(run=cmd_bump)
    rebuild = _verb(
        verbs,
        "rebuild-runtime",
        "rebuild the runtime repository from spec/upstream-history/, offline",
        "Replay spec/upstream-history/ into a new git repository with the same commit ids on every\n"
        "machine; point E2B_RUNTIME_REPO at it to work against a real upstream offline.",
        "python -m codegen rebuild-runtime /tmp/runtime",
        common,
    )
    rebuild.add_argument("dest", help="an empty or new folder")
    rebuild.set_defaults(run=cmd_rebuild_runtime)
    return top


def _terminate(signum: int, frame: FrameType | None) -> None:
    _INTERRUPTED.set()
    raise Terminated()


_INTERRUPTED = threading.Event()  # a signal has ended this run


def _unraisable(previous: Callable[[sys.UnraisableHookArgs], object], unraisable: sys.UnraisableHookArgs) -> None:
    """An exception a finalizer could not raise, while a run is on: a lost signal noted, the rest as said.

    A signal that lands in a finalizer (GitPython's cat-file stream, importlib's module-lock callback)
    cannot stop the run from there, nor be raised again from here: any way of raising it lands in this
    hook, and a thread started from a finalizer can deadlock on the locks the collected code held.  So
    it is noted (toolkit.signals.note_lost_signal): the main thread's next wait raises it, and if none
    comes, the run's end says so.  Once a signal has ended the run, the finalizers of what it left
    half-used complain as they are collected; the run's own message says what happened.
    """
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        note_lost_signal(int(getattr(unraisable.exc_value, "signum", signal.SIGINT)))
    elif not _INTERRUPTED.is_set():
        previous(unraisable)


def _tree_after(signum: int, facts: Sequence[str]) -> str:
    """What the tree holds when a signal ended the run outside a write: what this run settled, if anything."""
    if not facts:
        return "nothing was written"
    return f"{signal.Signals(signum).name} arrived after this run settled the tree: {'; '.join(facts)}"


def main(argv: Sequence[str] | None = None) -> int:
    # CPython 3.11's sysconfig fills its table on first use, without a lock: a thread that asks while
    # another fills it reads None. ruff's finder then failed in a generator's set-up ("ruff" + None:
    # three CI runs' TypeError). Filled here, before this run starts any thread.
    sysconfig.get_config_vars()
    args = parser().parse_args(argv)
    project = Project(args.root.resolve())
    messages = Messages(quiet=args.quiet)
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminate) if in_main_thread else None
    previous_hook = sys.unraisablehook
    sys.unraisablehook = functools.partial(_unraisable, previous_hook)
    take_lost_signals()  # none from an earlier run in this process
    finished_before = len(finished_writes())
    try:
        if args.verb in TREE_VERBS:
            # One run per tree: the write's renames and the check's reads must not interleave.
            with held(project.root / RUN_LOCK, f"the working tree {project.root}", messages):
                return int(args.run(project, args, messages))
        return int(args.run(project, args, messages))
    except ToolError as exc:
        for problem in exc.problems:
            messages.error(problem)
        if args.debug:
            raise
        return exc.exit_code
    except KeyboardInterrupt as exc:
        _INTERRUPTED.set()
        signum = int(getattr(exc, "signum", signal.SIGINT))
        messages.interrupted(str(exc) or _tree_after(signum, finished_writes()[finished_before:]))
        return 128 + signum
    except (ValueError, OSError) as exc:  # e.g. a bad rebuild-runtime destination, a failed write
        if args.debug:
            raise
        messages.error(str(exc))
        return EXIT_CANNOT_RUN
    finally:
        sys.unraisablehook = previous_hook
        went_on = not _INTERRUPTED.is_set()
        _INTERRUPTED.clear()
        for signum in take_lost_signals() if went_on else ():
            messages.warning(
                f"{signal.Signals(signum).name} arrived while Python ran a finalizer, where it cannot stop "
                "the run: the run went on to its end, as said above"
            )
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
