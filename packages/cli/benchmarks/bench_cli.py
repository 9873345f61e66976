"""Benchmark of the `e2b` command's start-up (not a test).

Each variant is a fresh process, run once per round; rounds are interleaved
(every other one in reverse order) so that a busy machine slows all alike,
and medians are reported. Prints the medians and the two ratios
docs/maintainers/performance.md quotes (targets: at most 1.5 each):

  * `e2b --version` and `e2b --help` against `python -c "import click"`:
    parsing the arguments must not pay for httpx, rich or the SDK;
  * `e2b sandbox list` against the local API server (three sandboxes, a
    table on stdout) against `python -c "import httpx"`: a command imports
    what it needs when it runs.

The local API server runs in a thread of this process on a port bound to 0.
Bytecode is cached, as in an installed package, even where
PYTHONDONTWRITEBYTECODE is set (then every import would compile its source,
which is most of the time measured): the subprocesses write it under a
temporary PYTHONPYCACHEPREFIX, and one untimed round fills it.

Run: .venv/bin/python packages/cli/benchmarks/bench_cli.py [ROUNDS] [--smoke]
(`--smoke`: one round, to show that it runs, tests/test_benchmarks.py; its figures mean nothing.)
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import uvicorn
from e2b_local_api import DEV_API_KEY, create_app
from e2b_local_api.http.http_protocol import server_config


def start_server() -> tuple[str, uvicorn.Server]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(server_config(create_app(), log_level="critical"))
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline:
            raise SystemExit("bench_cli: the local API server did not start")
        time.sleep(0.01)
    return f"http://127.0.0.1:{sock.getsockname()[1]}", server


def main(rounds: int) -> None:
    url, server = start_server()
    with httpx.Client(base_url=url, headers={"X-API-Key": DEV_API_KEY}) as api:
        for _ in range(3):
            api.post("/sandboxes", json={"templateID": "base"}).raise_for_status()
    python = sys.executable
    e2b = str(Path(python).with_name("e2b"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("E2B_") and k != "PYTHONDONTWRITEBYTECODE"}
    pycache = tempfile.TemporaryDirectory(prefix="bench-cli-pycache-")
    env |= {"E2B_API_URL": url, "E2B_API_KEY": DEV_API_KEY, "NO_COLOR": "1", "PYTHONPYCACHEPREFIX": pycache.name}
    variants = {
        "python -c 'import click'": [python, "-c", "import click"],
        "python -c 'import httpx'": [python, "-c", "import httpx"],
        "e2b --version": [e2b, "--version"],
        "e2b --help": [e2b, "--help"],
        "e2b sandbox list (local API)": [e2b, "sandbox", "list"],
    }
    for argv in variants.values():  # warm the page cache and the bytecode
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for i in range(rounds):
        order = list(variants.items())
        if i % 2:
            order.reverse()
        for name, argv in order:
            start = time.perf_counter()
            subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)
            samples[name].append(time.perf_counter() - start)
    server.should_exit = True
    pycache.cleanup()
    medians = {name: statistics.median(values) for name, values in samples.items()}
    print(f"start-up, fresh process each (medians of {rounds} interleaved rounds):")
    for name, value in medians.items():
        print(f"  {name}: {value * 1e3:.0f} ms")
    click_t, httpx_t = medians["python -c 'import click'"], medians["python -c 'import httpx'"]
    print("ratios (target <= 1.5):")
    print(f"  e2b --version / import click: {medians['e2b --version'] / click_t:.2f}")
    print(f"  e2b --help / import click: {medians['e2b --help'] / click_t:.2f}")
    print(f"  e2b sandbox list / import httpx: {medians['e2b sandbox list (local API)'] / httpx_t:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rounds", nargs="?", type=int, default=15, help="interleaved rounds [15]")
    parser.add_argument("--smoke", action="store_true", help="one round: it runs; the figures mean nothing")
    args = parser.parse_args()
    main(1 if args.smoke else args.rounds)
