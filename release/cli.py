"""`python -m release <verb>`: the command line over the release tools.

How it works, and why: docs/maintainers/design.md, "release/cli.py".
"""

from __future__ import annotations

import argparse
import datetime
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from release.errors import ReleaseError
from toolkit.errors import EXIT_CANNOT_RUN, ToolError
from toolkit.printable import printable_lines
from toolkit.signals import Terminated, interrupt_behind

ROOT = Path(__file__).resolve().parent.parent


def _to_stderr(message: str) -> None:
    print(printable_lines(f"release: {message}"), file=sys.stderr, flush=True)


def _to_stdout(message: str) -> None:
    print(printable_lines(message), flush=True)


def cmd_release(root: Path, args: argparse.Namespace) -> int:
    from release.make_release import run_release
    from toolkit.transaction import refuse_tracked_journal

    try:  # the release's generated-files check would refuse it too, after the plan: say it first, alone
        refuse_tracked_journal(root)
    except ToolError as exc:
        raise ReleaseError(*exc.problems) from None
    date = args.date or datetime.date.today().isoformat()
    return run_release(root, args.packages, dry_run=args.dry_run, date=date, say=_to_stderr, show=_to_stdout)


def cmd_changelog_check(root: Path, args: argparse.Namespace) -> int:
    from release.changelog_check import run_changelog_check

    return run_changelog_check(root, args.base, _to_stderr, _to_stdout)


def cmd_api_check(root: Path, args: argparse.Namespace) -> int:
    from release.api_check import run_api_check

    return run_api_check(root, args.base, _to_stderr, _to_stdout)


def cmd_release_tag(root: Path, args: argparse.Namespace) -> int:
    from release.tag import run_release_tag

    return run_release_tag(root, args.tag, args.out.resolve(), say=_to_stderr, show=_to_stdout)


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m release", description=__doc__)
    top.add_argument("--debug", action="store_true", help="show tracebacks")
    top.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    verbs = top.add_subparsers(dest="verb", required=True)
    release = verbs.add_parser("release", help="version, changelog, bounds, wheels: one all-or-nothing write")
    release.add_argument("packages", nargs="*", metavar="PACKAGE", help="distribution names (default: all pending)")
    release.add_argument("--dry-run", action="store_true", help="print the plan, build nothing, write nothing")
    release.add_argument("--date", help=argparse.SUPPRESS)  # the changelog's date, for reproducible tests
    release.set_defaults(run=cmd_release)
    check = verbs.add_parser("changelog-check", help="fail a package change that carries no fragment")
    check.add_argument("--base", help="compare with the merge base of this ref (default: main, else origin/main)")
    check.set_defaults(run=cmd_changelog_check)
    api = verbs.add_parser("api-check", help="compare each changed package's Python API with a base revision")
    api.add_argument("--base", help="compare with the merge base of this ref, e.g. a release tag (default: main)")
    api.set_defaults(run=cmd_api_check)
    tag = verbs.add_parser("release-tag", help="check a <package>-v<version> tag against the tree and build it")
    tag.add_argument("tag")
    tag.add_argument("--out", type=Path, default=Path("dist"), help="where the sdist and wheel go (default: dist)")
    tag.set_defaults(run=cmd_release_tag)
    return top


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise Terminated()  # nothing imported here: the signal may land in the middle of an import


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    root = args.root.resolve()
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminate) if in_main_thread else None
    try:
        return _run(args, root)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _run(args: argparse.Namespace, root: Path) -> int:
    try:
        try:
            return int(args.run(root, args))
        except Exception as exc:  # a signal some step turned into an error of its own is still the interrupt
            interrupt = interrupt_behind(exc)
            if interrupt is None or args.debug:
                raise
            raise interrupt from None
    except ToolError as exc:  # a ReleaseError, or codegen's own (e.g. a journal it cannot recover)
        for problem in exc.problems:
            print(printable_lines(f"error: {problem.render()}"), file=sys.stderr)
        if args.debug:
            raise
        return exc.exit_code
    except KeyboardInterrupt as exc:  # an InterruptedWrite says what the tree holds: the write finished first
        print(f"release: interrupted: {printable_lines(str(exc)) or 'nothing was written'}", file=sys.stderr)
        return 128 + int(getattr(exc, "signum", signal.SIGINT))
    except OSError as exc:
        if args.debug:
            raise
        print(printable_lines(f"error: {exc}"), file=sys.stderr)
        return EXIT_CANNOT_RUN
