"""The client half of `nox -s bench-dataplane`: one phase of data-plane calls, timed by whichever `e2b` runs it.

`python -I dataplane_client.py <url> <key> <phase> <runs> <size>` with the released SDK's
interpreter or this repository's; prints one JSON line of samples (seconds) and,
for `stream`, the client's resident memory growth. Imports nothing of this
repository: `e2b` is whichever the interpreter has (typed Any for mypy).
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
from typing import Any


def rss() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def main(argv: list[str]) -> dict[str, Any]:
    url, key, phase, runs, size = argv[0], argv[1], argv[2], int(argv[3]), int(argv[4])
    os.environ["E2B_API_URL"] = os.environ["E2B_SANDBOX_URL"] = url
    os.environ["E2B_API_KEY"] = key
    e2b: Any = importlib.import_module("e2b")
    sandbox = e2b.Sandbox.create(timeout=600)
    try:
        sandbox.commands.run("true")  # warm: imports, the connection pool, the sandbox's agent
        samples: list[float] = []
        if phase == "true":
            for _ in range(runs):
                start = time.perf_counter()
                sandbox.commands.run("true")
                samples.append(time.perf_counter() - start)
            return {"samples": samples}
        if phase == "create":
            for _ in range(runs):
                start = time.perf_counter()
                fresh = e2b.Sandbox.create(timeout=600)
                fresh.commands.run("true")
                samples.append(time.perf_counter() - start)
                fresh.kill()
            return {"samples": samples}
        if phase == "stream":
            received = calls = 0
            peak = before = rss()

            def on_stdout(chunk: str) -> None:
                nonlocal received, calls, peak
                received += len(chunk)
                calls += 1
                if calls % 16 == 0:  # reading /proc costs about as much as a chunk: a sample, not each
                    peak = max(peak, rss())

            start = time.perf_counter()
            sandbox.commands.run(stream_command(size), on_stdout=on_stdout, timeout=0, retain_output=False)
            samples.append(time.perf_counter() - start)
            peak = max(peak, rss())
            assert received == size, f"received {received} characters of {size}"
            return {"samples": samples, "client_rss_growth": peak - before}
        if phase == "files":
            data = os.urandom(size)
            # Warm the files' own path (its client, its connection), as run("true") warmed the commands'.
            sandbox.files.write("/tmp/warm.bin", b"warm")
            sandbox.files.read("/tmp/warm.bin", format="bytes")
            writes, reads = [], []
            for _ in range(runs):
                start = time.perf_counter()
                sandbox.files.write("/tmp/bench.bin", data)
                writes.append(time.perf_counter() - start)
                start = time.perf_counter()
                back = sandbox.files.read("/tmp/bench.bin", format="bytes")
                reads.append(time.perf_counter() - start)
                assert len(back) == size, f"read {len(back)} bytes of {size}"
                del back
            return {"write": writes, "read": reads}
        raise SystemExit(f"unknown phase {phase!r}")
    finally:
        sandbox.kill()


def stream_command(size: int) -> str:
    """`size` bytes of text on stdout, in lines (both the sandbox and the local floor run it)."""
    return f"yes abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ | head -c {size}"


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:])))
    sys.stdout.flush()
    # As tests/conformance/released_calls.py: no interpreter finalization (the released SDK's pyqwest may abort it).
    os._exit(0)
