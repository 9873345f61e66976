"""Benchmark: `bump` on the real shape beside `generate` on the same pin (issue 30's 1.5x target).

A copy of this project (a git repository, at its pin) and a local upstream holding the real
spec plus the pause change (as bench_codegen builds it), then a field added to an envd message
(`R0`), so that the bump's report compares the protos too; one cache folder for both.
Each round resets the copy to its pin, then times, in turn:
  bump      `python -m codegen bump R0`: fetch, the report, generation, griffe and the type check
  codegen   R0 written into spec/runtime-ref, `python -m codegen generate`
so both end with the same regenerated tree (codegen on a warm machine, as a maintainer runs it
after a bump), and then the same two as `nox -R -s bump -- R0` and `nox -R -s codegen` in the
copy (its own venvs, built by the warm-up). One warm-up of each first. Prints the medians and
the median of the rounds' ratios; `--profile FILE` writes a cProfile of one more bump instead.
`--cold`: every bump starts without the parser's and griffe's remembered answers (a first bump).
`--smoke`: one round, no warm-up: it shows that the benchmark runs (tests/test_benchmarks.py).
The nox runs use `--nox-python` (`nox -s bench-bump` passes the interpreter running it: the
session's own has no nox), else this interpreter if it has nox.

    python benchmarks/bench_bump.py [--runs N] [--cold] [--profile FILE] [--smoke] [--nox-python PATH]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_codegen import copy_project, git, real_shape_upstream, timed
from tests.fixtures import REAL_SPEC


def reset(project: Path) -> None:
    git(project, "checkout", "-q", "--", ".")
    git(project, "clean", "-q", "-fd")


def with_a_proto_field(runtime: Path) -> str:
    """One more runtime commit: a field added to `filesystem.EntryInfo` (minor), for the proto comparison."""
    proto = runtime / "spec/envd/filesystem/filesystem.proto"
    text = proto.read_text()
    field = "  bool is_symlink = 12;\n"
    if text.count(field) != 1:
        sys.exit(f"bench_bump: {proto} no longer has {field.strip()!r}: update the benchmark's proto change")
    proto.write_text(text.replace(field, field + "  string link_kind = 13;\n"))
    git(runtime, "commit", "-q", "-am", "envd: a field added")
    return git(runtime, "rev-parse", "HEAD")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--profile", type=Path)
    parser.add_argument("--cold", action="store_true")
    parser.add_argument("--smoke", action="store_true", help="one round, no warm-up: it runs; the figures mean nothing")
    parser.add_argument("--nox-python", type=Path, help="an interpreter with nox, for the nox runs [this one]")
    args = parser.parse_args()
    nox_python = args.nox_python or Path(sys.executable)
    if args.nox_python is None and importlib.util.find_spec("nox") is None:
        # `nox -s bench-bump` passes the interpreter running nox; its session's virtualenv has none.
        parser.exit(2, "bench_bump: this interpreter has no nox: run `nox -s bench-bump`, or pass --nox-python PATH\n")
    if not REAL_SPEC.is_file():
        print(f"bump benchmark: skipped, {REAL_SPEC} is absent")
        return

    work = Path(tempfile.mkdtemp(prefix="bench-bump-"))
    try:
        project = copy_project(work / "project")
        git(project, "init", "-q", "-b", "main")
        git(project, "add", "-A")
        git(project, "commit", "-q", "-m", "the project at its pin")
        real_shape_upstream(work / "runtime")
        commit = with_a_proto_field(work / "runtime")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env |= {
            "E2B_CODEGEN_CACHE": str(work / "cache"),
            "E2B_RUNTIME_REPO": str(work / "runtime"),
            "PYTHONPYCACHEPREFIX": str(work / "pycache"),
        }
        python = [sys.executable, "-m", "codegen", "--root", str(project)]
        nox = [str(nox_python), "-m", "nox", "-R", "-f", str(project / "noxfile.py")]
        commands = {
            "bump": [*python, "bump", commit],
            "codegen": [*python, "generate"],
            "nox bump": [*nox, "-s", "bump", "--", commit],
            "nox codegen": [*nox, "-s", "codegen"],
        }

        def run(name: str, command: list[str] | None = None) -> float:
            reset(project)  # .nox is ignored by git: the copy's venvs stay
            if name.endswith("codegen"):
                (project / "spec/runtime-ref").write_text(commit + "\n")
            elif args.cold:
                for kind in ("client-parser", "python-api"):
                    shutil.rmtree(work / "cache" / kind, ignore_errors=True)
            return timed(command or commands[name], project, env)

        if not args.smoke:  # with it, the round's nox runs build the copy's venvs
            for name in commands:
                run(name)  # the warm-up; nox builds the copy's venvs
        if args.profile:
            # In process: `python -m codegen` ends with os._exit, before cProfile could write its file.
            driver = (
                "import cProfile, sys; from codegen.cli import main; "
                f"cProfile.run('main(sys.argv[1:])', {str(args.profile.resolve())!r})"
            )
            run("bump", [sys.executable, "-c", driver, *commands["bump"][3:]])
            print(f"profile of one bump: {args.profile}")
            return
        results: dict[str, list[float]] = {name: [] for name in commands}
        runs = 1 if args.smoke else args.runs
        for _ in range(runs):
            for name in commands:
                results[name].append(run(name))
        print(f"real shape, runs: {runs} (interleaved){', cold' if args.cold else ''}, medians:")
        for key, values in results.items():
            print(f"  {key:12} {statistics.median(values):6.2f} s   (all: {', '.join(f'{x:.2f}' for x in values)})")
        for prefix in ("", "nox "):
            bumps, codegens = results[f"{prefix}bump"], results[f"{prefix}codegen"]
            paired = statistics.median(b / c for b, c in zip(bumps, codegens, strict=True))
            ratio = statistics.median(bumps) / statistics.median(codegens)
            print(
                f"  {prefix}bump / {prefix}codegen: {ratio:.2f}x, round by round {paired:.2f}x (target: 1.5x or less)"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
