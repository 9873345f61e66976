"""Benchmark: the pipeline's wall time beside the bare generator calls it wraps.

Runs, interleaved so that machine noise hits them all alike:
  side      openapi-python-client and datamodel-codegen on the filtered spec, protoc with its two
            plugins on envd's protos, and openapi-python-client again on envd.yaml without its
            x-internal operations, started together, as the pipeline starts them
            (codegen/generation/generators.py: same interpreter flags, arguments and environment),
            nothing else: the floor codegen is measured against
  launched  the same four calls through codegen's own launcher (`launcher`): each imports its
            generator, reads its arguments and ends without the interpreter's teardown, as in a
            codegen run; codegen/launched is what the pipeline adds to the generators as it runs them
  serial    the same four calls one after the other (their sum)
  codegen   `python -m codegen generate` on a copy of this project (warm cache, local upstream)
  check     `python -m codegen check` on the same copy, nothing changed: the generation cache answers
  full      `python -m codegen check --no-cache`: the full run the required CI check makes
and prints medians and the ratios codegen/side, codegen/launched, codegen/serial,
check/codegen and full/codegen, for this repository's spec and for the real-shape spec
(../shared/fixtures/e2b-openapi.yml plus the pause change of tests/codegen/real_upstream/,
pinned in the copy).  `codegen` runs with a warm cache, as on a developer's machine: the
validator's verdict on the pinned spec is recorded, so only `full` validates, and its
bytecode is cached (in a temporary PYTHONPYCACHEPREFIX, even where PYTHONDONTWRITEBYTECODE
is set), as the generators' is.  The codegen/side ratio is also given round by round: each
round times the two one after the other, so its median follows the machine's drift.
`--smoke`: one round on this repository's spec, no warm-up run: it shows that the benchmark
runs (tests/test_benchmarks.py); its figures mean nothing.

    python benchmarks/bench_codegen.py [--runs N] [--shape own|real|both] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAUSE_CHANGE = ROOT / "tests" / "codegen" / "real_upstream" / "pause-contract.patch"
sys.path.insert(0, str(ROOT))

from codegen.config import load_source  # noqa: E402
from codegen.generation.generators import (  # noqa: E402
    CLIENT,
    CLIENT_CONFIG,
    ENVD_HTTP,
    ENVD_HTTP_SPEC,
    PROTOC,
    PYTHON,
    WIRE,
    client_args,
    client_config,
    filtered_json,
    launcher,
    private_scratch,
    tool_env,
    wire_model_args,
    write_filtered_spec,
)
from codegen.generation.protoc import protoc_args, protos_of  # noqa: E402
from codegen.openapi.document import load_spec  # noqa: E402
from codegen.openapi.operation_map import load_operation_map  # noqa: E402
from codegen.openapi.sdk_filter import filter_internal, filter_spec  # noqa: E402
from tests.fixtures import REAL_SPEC  # noqa: E402
from toolkit.paths import Project  # noqa: E402


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, errors="replace")
    elapsed = time.perf_counter() - start
    if done.returncode != 0:  # what went wrong, not only that it did
        sys.exit(f"benchmark: {' '.join(cmd)} exited {done.returncode}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return elapsed


Calls = list[tuple[str, list[str]]]  # (generator, its arguments after `python -m`)


def generator_calls(spec: Path, work: Path, templates: Path, project: Path) -> Calls:
    """The generator calls the pipeline makes (codegen/generation/generators.py's own arguments), protoc's and
    envd's HTTP client's too."""
    config = client_config(ROOT / "codegen" / CLIENT_CONFIG, work)  # with its post hooks, as the pipeline runs it
    synced = [(p.relative_to(project).as_posix(), p.read_bytes()) for p in (project / "spec/envd").rglob("*.proto")]
    http = project / "spec/envd/envd.yaml"
    envd_spec = work / ENVD_HTTP_SPEC  # filtered as the pipeline filters it
    envd_spec.write_bytes(filtered_json(filter_internal(load_spec(http.read_bytes()).data, display_path=str(http))))
    return [
        (CLIENT, [*client_args(spec, work / "bare-client", templates, config), "--overwrite"]),
        (WIRE, wire_model_args(spec, work / "bare-models.py")),
        (PROTOC, protoc_args(protos_of(synced), work)[0]),  # envd's protos, with the two plugins
        (ENVD_HTTP, [*client_args(envd_spec, work / "bare-envd-client", templates, config), "--overwrite"]),
    ]


def bare_commands(calls: Calls) -> list[list[str]]:
    return [[*PYTHON, "-m", *args] for _, args in calls]


def side_by_side(commands: list[list[str]], cwd: Path, env: dict[str, str], stdin: list[bytes] | None = None) -> float:
    """All commands started together, as the pipeline starts the generators; wall time until the last ends.

    `stdin`: what each command reads, written as soon as it is started.
    """
    start = time.perf_counter()
    started = []
    inputs: list[bytes | None] = list(stdin) if stdin else [None] * len(commands)
    for cmd, given in zip(commands, inputs, strict=True):
        process = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL if given is None else subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if given is not None:
            assert process.stdin is not None
            process.stdin.write(given)
            process.stdin.close()
        started.append(process)
    codes = [process.wait() for process in started]
    elapsed = time.perf_counter() - start
    if any(codes):
        raise subprocess.CalledProcessError(max(codes), commands[codes.index(max(codes))])
    return elapsed


def launched_side_by_side(calls: Calls, cwd: Path, env: dict[str, str]) -> float:
    """The calls through codegen's launcher, started together and given their arguments at once."""
    arguments = [json.dumps(args).encode() + b"\n" for _, args in calls]
    return side_by_side([launcher(tool) for tool, _ in calls], cwd, env, stdin=arguments)


def copy_project(dest: Path) -> Path:
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    for rel in filter(None, files.split("\0")):
        if (ROOT / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dest / rel)
    return dest


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    person = ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    done = subprocess.run(["git", *person, *args], cwd=cwd, env=env, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def real_shape_upstream(dest: Path) -> str:
    """The fixture and this repository's envd files, then the pause change; returns the second commit."""
    (dest / "spec").mkdir(parents=True)
    git(dest, "init", "-q", "-b", "main")
    shutil.copyfile(REAL_SPEC, dest / "spec/openapi.yml")
    shutil.copytree(ROOT / "spec/envd", dest / "spec/envd")  # the runtime holds the data plane's files too
    git(dest, "add", "spec")
    git(dest, "commit", "-q", "-m", "fixture")
    git(dest, "apply", str(PAUSE_CHANGE))
    git(dest, "commit", "-q", "-am", "pause contract")
    return git(dest, "rev-parse", "HEAD")


def measure(
    name: str, work: Path, project: Path, upstream: Path, runs: int, warm_up: bool = True
) -> dict[str, list[float]]:
    """Interleaved runs of the bare generators, codegen and check on one project and upstream."""
    # Bytecode cached as on a maintainer's machine, where PYTHONDONTWRITEBYTECODE would have codegen
    # compile its own source (and GitPython's) on every run; the warm-up run below fills it. The
    # generators run as `python -I`, which ignores the variable: theirs is cached in site-packages.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env |= {
        "E2B_CODEGEN_CACHE": str(work / "cache"),
        "E2B_RUNTIME_REPO": str(upstream),
        "PYTHONPYCACHEPREFIX": str(work / "pycache"),
    }
    codegen = [sys.executable, "-m", "codegen", "--root", str(project), "generate"]
    # A copy without git history: no base revision, so the tree is trusted explicitly.
    check = [sys.executable, "-m", "codegen", "--root", str(project), "check", "--trust-tree"]
    full = [*check, "--no-cache"]
    if warm_up:  # else the round's codegen, which runs before its check, warms them
        timed(codegen, ROOT, env)  # warm the cache and the tree
    # The bare generators get the spec the pipeline generates from: filtered and named.
    document = load_spec((project / "spec/openapi.yml").read_bytes())
    operations = load_operation_map(project / "spec/operations.yml")
    codegen_project = Project(project)
    filtered = filter_spec(document.data, tags=load_source(codegen_project).sdk_tags, operations=operations)
    (work / "filtered").mkdir()
    spec = write_filtered_spec(filtered, work / "filtered")
    results: dict[str, list[float]] = {"side": [], "launched": [], "serial": [], "codegen": [], "check": [], "full": []}
    with private_scratch(work / "bare-scratch") as scratch:
        calls = generator_calls(spec, scratch, codegen_project.templates / "client", project)
        bare = bare_commands(calls)
        bare_env = tool_env(scratch)
        for _ in range(runs):
            results["side"].append(side_by_side(bare, scratch, bare_env))
            results["launched"].append(launched_side_by_side(calls, scratch, bare_env))
            results["codegen"].append(timed(codegen, ROOT, env))
            results["serial"].append(sum(timed(cmd, scratch, bare_env) for cmd in bare))
            results["check"].append(timed(check, ROOT, env))
            results["full"].append(timed(full, ROOT, env))
    return results


def report(name: str, results: dict[str, list[float]], runs: int) -> None:
    med = {k: statistics.median(v) for k, v in results.items()}
    print(f"{name}: runs: {runs} (interleaved), medians:")
    for key, value in med.items():
        print(f"  {key:8} {value:6.2f} s   (all: {', '.join(f'{x:.2f}' for x in results[key])})")
    paired = statistics.median(c / s for c, s in zip(results["codegen"], results["side"], strict=True))
    print(
        f"  codegen / side by side:    {med['codegen'] / med['side']:.2f}x, round by round {paired:.2f}x "
        f"(the generators started together, as codegen starts them; target: 1.2x or less)"
    )
    launched = statistics.median(c / s for c, s in zip(results["codegen"], results["launched"], strict=True))
    print(
        f"  codegen / launched:        {med['codegen'] / med['launched']:.2f}x, round by round {launched:.2f}x "
        "(the generators as codegen runs them, without their interpreters' teardown: what the pipeline adds)"
    )
    print(f"  codegen / serial sum:      {med['codegen'] / med['serial']:.2f}x (one generator after the other)")
    print(f"  check / codegen:           {med['check'] / med['codegen']:.2f}x (no change, from the cache)")
    print(f"  full / codegen:            {med['full'] / med['codegen']:.2f}x (check --no-cache)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--shape", choices=("own", "real", "both"), default="both")
    parser.add_argument("--smoke", action="store_true", help="one round, own spec, no warm-up: it runs")
    args = parser.parse_args()
    if args.smoke:
        args.runs, args.shape = 1, "own"

    work = Path(tempfile.mkdtemp(prefix="bench-codegen-"))
    try:
        if args.shape in ("own", "both"):
            own = work / "own"
            project = copy_project(own / "project")
            subprocess.run(
                [sys.executable, "-m", "codegen", "rebuild-runtime", str(own / "runtime")],
                cwd=ROOT,
                check=True,
                capture_output=True,
            )
            results = measure("own", own, project, own / "runtime", args.runs, warm_up=not args.smoke)
            report("this repository's spec", results, args.runs)
        if args.shape in ("real", "both"):
            if not REAL_SPEC.is_file():
                print(f"real-shape spec: skipped, {REAL_SPEC} is absent")
                return
            real = work / "real"
            project = copy_project(real / "project")
            commit = real_shape_upstream(real / "runtime")
            (project / "spec/runtime-ref").write_text(commit + "\n")
            results = measure("real", real, project, real / "runtime", args.runs)
            report("real-shape spec (fixture + pause change)", results, args.runs)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
