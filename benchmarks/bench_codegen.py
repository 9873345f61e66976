"""Benchmark: the pipeline's wall time beside the bare generator calls it wraps.

Runs, interleaved so that machine noise hits all three alike:
  bare      openapi-python-client + datamodel-codegen on the filtered spec, nothing else
  codegen   `python -m codegen generate` on a copy of this project (warm cache, local upstream)
  check     `python -m codegen check` on the same copy
and prints medians and the ratios codegen/bare and check/codegen.

    python benchmarks/bench_codegen.py [--runs N]
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
sys.path.insert(0, str(ROOT))

from codegen.generate import CLIENT_CONFIG  # noqa: E402
from codegen.spec_document import load_spec  # noqa: E402
from codegen.spec_filter import filter_spec  # noqa: E402


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs

    work = Path(tempfile.mkdtemp(prefix="bench-codegen-"))
    try:
        files = (
            subprocess.run(
                ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                cwd=ROOT,
                check=True,
                capture_output=True,
            )
            .stdout.decode()
            .split("\0")
        )
        project = work / "project"
        for rel in filter(None, files):
            if (ROOT / rel).is_file():
                (project / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / rel, project / rel)
        upstream = work / "runtime"
        env = {
            **os.environ,
            "E2B_CODEGEN_CACHE": str(work / "cache"),
            "E2B_RUNTIME_REPO": str(upstream),
        }
        subprocess.run(
            [sys.executable, "-m", "codegen", "rebuild-runtime", str(upstream)],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
        )

        tags = ["sandboxes"]
        filtered = filter_spec(load_spec((ROOT / "spec/openapi.yml").read_bytes()).data, tags=tags)
        spec = work / "filtered.json"
        spec.write_text(json.dumps(filtered))
        bare_cmds = [
            [
                sys.executable,
                "-m",
                "openapi_python_client",
                "generate",
                "--path",
                str(spec),
                "--meta",
                "none",
                "--config",
                str(CLIENT_CONFIG),
                "--output-path",
                str(work / "bare-client"),
                "--overwrite",
            ],
            [
                sys.executable,
                "-m",
                "datamodel_code_generator",
                "--input",
                str(spec),
                "--input-file-type",
                "openapi",
                "--output",
                str(work / "bare-models.py"),
                "--output-model-type",
                "pydantic_v2.BaseModel",
                "--disable-timestamp",
            ],
        ]
        codegen = [sys.executable, "-m", "codegen", "--root", str(project), "generate"]
        check = [sys.executable, "-m", "codegen", "--root", str(project), "check"]
        timed(codegen, ROOT, env)  # warm the cache and the tree
        results: dict[str, list[float]] = {"bare": [], "codegen": [], "check": []}
        for _ in range(runs):
            results["bare"].append(sum(timed(cmd, work, env) for cmd in bare_cmds))
            results["codegen"].append(timed(codegen, ROOT, env))
            results["check"].append(timed(check, ROOT, env))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    med = {k: statistics.median(v) for k, v in results.items()}
    print(f"runs: {runs} (interleaved), medians:")
    for name, value in med.items():
        print(f"  {name:8} {value:6.2f} s   (all: {', '.join(f'{x:.2f}' for x in results[name])})")
    print(
        f"codegen / bare generators: {med['codegen'] / med['bare']:.2f}x "
        f"(pipeline's own work: {100 * (med['codegen'] / med['bare'] - 1):+.0f}%)"
    )
    print(f"check / codegen:           {med['check'] / med['codegen']:.2f}x")


if __name__ == "__main__":
    main()
