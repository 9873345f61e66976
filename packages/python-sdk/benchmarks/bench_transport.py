"""Benchmark of the retrying transport against a local server (not a test).

Prints:
  * requests per refused pause (must be exactly 1);
  * time from request to refusal through an httpx.Client (median over N);
  * the transport's overhead on plain 200s against the bare inner transport,
    measured interleaved in one run (medians and ratio; target < 5 %);
  * peak traced memory of a peek on a 100 MB 503 body (tracemalloc; target:
    the 8 KiB cap plus a constant);
  * the wall time of a 503 whose body stalls, on each stack (pyqwest and
    httpx, sync and async), with no read timeout shorter than the deadline:
    the peek alone, and the peek then a retry that answers (target: the
    peek's own budget, 1 s, which counts towards the backoff, not the
    request's deadline); and `Sandbox.pause` with `request_timeout=2`
    against a body that always stalls (target: 2 s);
  * start-up: `import httpx`, `import e2b` and `from e2b import Sandbox`,
    each a fresh interpreter, interleaved, medians (the CLI's: `nox -s bench-cli`);
    `--python LABEL=PATH` adds another environment's interpreter (the
    released `e2b` in a throwaway venv, say) to the same rounds.

Run: .venv/bin/python packages/python-sdk/benchmarks/bench_transport.py [N]
     [--import-runs R] [--python LABEL=PATH ...] [--smoke]
`--smoke`: the fewest requests and runs of each part: it shows that the benchmark runs
(tests/test_benchmarks.py); its figures mean nothing.

``on_refusal`` does what the SDK does with a refused response: it maps it to
`SandboxPauseRefusedException` (`e2b._exceptions.handle_api_exception`); it
runs inside the timed region.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import random
import socket
import statistics
import subprocess
import sys
import threading
import time
import tracemalloc
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import httpx
import pyqwest
from e2b import AsyncSandbox, Sandbox, SandboxPauseRefusedException, TimeoutException
from e2b._exceptions import handle_api_exception
from e2b._transport import (
    AsyncRetryableTransport,
    RetryableTransport,
    RetryPolicy,
    default_async_transport,
    default_transport,
)
from pyqwest.httpx import PyqwestTransport

REFUSAL = json.dumps({"code": 503, "message": "pause refused", "error_code": "sandbox_pause_refused"}).encode()
BIG = 100 * 1024 * 1024


def on_refusal(response: httpx.Response) -> object:
    """What the SDK does with a refused response: map it to SandboxPauseRefusedException."""
    error = handle_api_exception(response)
    assert isinstance(error, SandboxPauseRefusedException), error
    return error


class Server:
    """Minimal keep-alive HTTP/1.1 server.

    /ok: a 200; /refusal and any path ending in /pause: a refused pause (503);
    /stall-once-*: a 503 whose body stalls, then 200s; any other /stall path
    (an `api_url` of /stall, say): always that stalling 503; anything else
    (/big): a chunked 503 of 100 MB, or of N bytes with `?size=N`.
    """

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.hits: Counter[str] = Counter()
        self.stop = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        buf = b""
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                head, _, buf = buf.partition(b"\r\n\r\n")
                path = head.split(b" ", 2)[1].decode()
                self.hits[path] += 1
                if path == "/ok" or (path.startswith("/stall-once") and self.hits[path] > 1):
                    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
                elif path.startswith("/stall"):
                    # A 503 whose JSON body stops after 10 bytes; the connection stays open.
                    conn.sendall(
                        b"HTTP/1.1 503 X\r\ncontent-type: application/json\r\n"
                        b"content-length: %d\r\n\r\n%s" % (len(REFUSAL), REFUSAL[:10])
                    )
                    self.stop.wait(30)
                    return
                elif path == "/refusal" or path.endswith("/pause"):
                    conn.sendall(
                        b"HTTP/1.1 503 X\r\ncontent-type: application/json\r\n"
                        b"content-length: %d\r\n\r\n%s" % (len(REFUSAL), REFUSAL)
                    )
                else:
                    size = int(path.rpartition("=")[2]) if "=" in path else BIG
                    conn.sendall(
                        b"HTTP/1.1 503 X\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
                    )
                    piece = b"%x\r\n%s\r\n" % (65536, b" " * 65536)
                    for _ in range(size // 65536):
                        conn.sendall(piece)
                    conn.sendall(b"0\r\n\r\n")
        except OSError:
            return
        finally:
            conn.close()


def bare_inner() -> PyqwestTransport:
    return PyqwestTransport(pyqwest.SyncHTTPTransport(follow_redirects=False))


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main(n: int, import_runs: int, pythons: dict[str, str], stall_runs: int = 3) -> None:
    server = Server()
    bench_requests(server, n)
    bench_stalls(server, stall_runs)
    bench_imports(import_runs, pythons)
    server.stop.set()


def bench_requests(server: Server, n: int) -> None:
    fast = RetryPolicy(backoff_base=0.001, backoff_cap=0.002)

    with httpx.Client(transport=default_transport(policy=fast)) as client:
        before = server.hits["/refusal"]
        response = client.post(server.url + "/refusal")
        on_refusal(response)
        print(f"requests per refused pause: {server.hits['/refusal'] - before}")

        for _ in range(50):
            client.post(server.url + "/refusal")
        samples = [timed(lambda: on_refusal(client.post(server.url + "/refusal"))) for _ in range(n)]
        print(
            f"request -> refusal (default pyqwest transport, N={n}): "
            f"median {statistics.median(samples) * 1e6:.0f} us, "
            f"p90 {statistics.quantiles(samples, n=10)[-1] * 1e6:.0f} us"
        )

    def sdk_pause() -> None:
        try:
            Sandbox.pause("sbx", api_url=server.url, api_key="bench")
        except SandboxPauseRefusedException:
            return
        raise AssertionError("the refusal did not raise")

    before = server.hits["/sandboxes/sbx/pause"]
    sdk_pause()
    print(f"requests per refused Sandbox.pause(): {server.hits['/sandboxes/sbx/pause'] - before}")
    for _ in range(20):
        sdk_pause()
    samples = [timed(sdk_pause) for _ in range(max(n // 5, 20))]
    print(
        f"Sandbox.pause(id) -> SandboxPauseRefusedException (class form, new client per call, "
        f"N={len(samples)}): median {statistics.median(samples) * 1e6:.0f} us"
    )

    bare = httpx.Client(transport=bare_inner())
    wrapped = httpx.Client(transport=default_transport(policy=fast))  # as the SDK builds it
    url = server.url + "/ok"
    for _ in range(200):
        bare.get(url)
        wrapped.get(url)
    bare_t: list[float] = []
    wrapped_t: list[float] = []
    for i in range(n * 4):
        # Alternate which goes first so drift and warm caches hit both alike.
        pair = [(bare, bare_t), (wrapped, wrapped_t)]
        for c, out in pair if i % 2 else reversed(pair):
            out.append(timed(functools.partial(c.get, url)))
    b, w = statistics.median(bare_t), statistics.median(wrapped_t)
    print(
        f"plain 200 (N={n * 4} each, interleaved): bare median {b * 1e6:.0f} us, "
        f"wrapped median {w * 1e6:.0f} us, ratio {w / b:.3f} ({(w / b - 1) * 100:+.1f} %)"
    )
    bare.close()
    wrapped.close()

    inners: list[tuple[str, Callable[[], httpx.BaseTransport]]] = [
        ("pyqwest", bare_inner),
        ("httpx.HTTPTransport", httpx.HTTPTransport),
    ]
    for name, inner in inners:
        transport = RetryableTransport(inner(), RetryPolicy(retries=0))
        transport.handle_request(httpx.Request("GET", server.url + "/ok")).close()  # warm
        for label, size in [("1 MB", 1 << 20), ("100 MB", BIG)]:
            peak, elapsed, status = peek_peak(transport, f"{server.url}/big?size={size}")
            print(
                f"peek of a {label} 503 body via {name}: peak traced {peak / 1024:.1f} KiB, "
                f"{elapsed * 1e3:.1f} ms, status {status}"
            )
        transport.close()


def peek_peak(transport: RetryableTransport, url: str) -> tuple[int, float, int]:
    """Peak traced memory while the transport peeks (retries=0: it then hands on)."""
    request = httpx.Request("GET", url, extensions={"timeout": {"read": 10, "write": 10}})
    tracemalloc.start()
    start = time.perf_counter()
    response = transport.handle_request(request)
    elapsed = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    response.close()
    return peak, elapsed, response.status_code


STALL_DEADLINE = 5.0


def bench_stalls(server: Server, runs: int) -> None:
    """A 503 whose body stalls, on each stack, with no read timeout shorter than the deadline.

    The peek keeps its own budget, min(max(backoff, 1 s), time left): 1 s
    here. Measured twice: alone (no retries: the peek gives up and hands the
    response on), and followed by a retry that answers 200.
    """
    # No jitter: the backoff before the first re-send is exactly 0.5 s, under the 1 s floor.
    policy = RetryPolicy(jitter=0.0)
    alone = RetryPolicy(jitter=0.0, retries=0)
    timeout = httpx.Timeout(STALL_DEADLINE)
    stacks: list[tuple[str, Callable[[RetryPolicy], RetryableTransport | AsyncRetryableTransport]]] = [
        ("pyqwest sync", lambda p: default_transport(policy=p)),
        ("pyqwest async", lambda p: default_async_transport(policy=p)),
        ("httpx sync", lambda p: RetryableTransport(httpx.HTTPTransport(), p)),
        ("httpx async", lambda p: AsyncRetryableTransport(httpx.AsyncHTTPTransport(), p)),
    ]

    def run(transport: RetryableTransport | AsyncRetryableTransport, url: str) -> tuple[float, int]:
        """Seconds until the response is handed over (headers; the body is not read), and its status."""
        if isinstance(transport, AsyncRetryableTransport):

            async def fetch() -> tuple[float, int]:
                async with httpx.AsyncClient(transport=transport, timeout=timeout) as client:
                    start = time.perf_counter()
                    async with client.stream("GET", url) as response:
                        return time.perf_counter() - start, response.status_code

            return asyncio.run(fetch())
        with httpx.Client(transport=transport, timeout=timeout) as client:
            start = time.perf_counter()
            with client.stream("GET", url) as response:
                return time.perf_counter() - start, response.status_code

    print(
        f"stalled 503 body (peek budget 1 s, backoff {policy.backoff_base:g} s, deadline {STALL_DEADLINE:g} s, "
        f"no shorter read timeout; medians of {runs}):"
    )
    for name, make in stacks:
        peeks, retried = [], []
        for i in range(runs):
            tag = f"{name.replace(' ', '-')}-{i}-{random.random()}"
            elapsed, status = run(make(alone), f"{server.url}/stall-always-{tag}")
            assert status == 503, status
            peeks.append(elapsed)
            elapsed, status = run(make(policy), f"{server.url}/stall-once-{tag}")
            assert status == 200, status
            retried.append(elapsed)
        print(
            f"  {name}: peek alone {statistics.median(peeks):.2f} s, "
            f"then a retry that answers {statistics.median(retried):.2f} s"
        )

    def sdk_pause(flavour: str) -> float:
        opts = {"api_url": server.url + "/stall", "api_key": "bench", "request_timeout": 2}
        start = time.perf_counter()
        try:
            if flavour == "sync":
                Sandbox.pause("sbx", **opts)  # type: ignore[arg-type]
            else:
                asyncio.run(AsyncSandbox.pause("sbx", **opts))  # type: ignore[arg-type]
        except TimeoutException:
            return time.perf_counter() - start
        raise AssertionError("a stalled body did not time out")

    for flavour in ("sync", "async"):
        print(f"  Sandbox.pause(id, request_timeout=2), body always stalls, {flavour}: {sdk_pause(flavour):.2f} s")


def bench_imports(runs: int, pythons: dict[str, str]) -> None:
    """Fresh-interpreter start-up, every variant once per round, rounds interleaved."""
    here = str(Path(sys.executable))
    variants: dict[str, list[str]] = {}
    for label, python in {"this env": here, **pythons}.items():
        variants[f"{label}: python -c pass"] = [python, "-c", "pass"]
        variants[f"{label}: import httpx"] = [python, "-c", "import httpx"]
        variants[f"{label}: import e2b"] = [python, "-c", "import e2b"]
        variants[f"{label}: from e2b import Sandbox"] = [python, "-c", "from e2b import Sandbox"]
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for i in range(runs):
        order = list(variants.items())
        if i % 2:
            order.reverse()
        for name, argv in order:
            start = time.perf_counter()
            subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
            samples[name].append(time.perf_counter() - start)
    print(f"start-up, fresh interpreter each (medians of {runs}, interleaved):")
    for name, values in samples.items():
        print(f"  {name}: {statistics.median(values) * 1e3:.0f} ms")


def _python(value: str) -> tuple[str, str]:
    label, sep, path = value.partition("=")
    if not sep or not Path(path).exists():
        raise argparse.ArgumentTypeError(f"expected LABEL=PATH to a python interpreter, got {value!r}")
    return label, path


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("n", nargs="?", type=int, default=500, help="requests per latency sample [500]")
    parser.add_argument("--import-runs", type=int, default=7, help="rounds of start-up timings [7]")
    parser.add_argument("--python", type=_python, action="append", default=[], metavar="LABEL=PATH")
    parser.add_argument("--smoke", action="store_true", help="N=5, one run of each part: it runs")
    args = parser.parse_args()
    if args.smoke:
        main(5, 1, dict(args.python), stall_runs=1)
    else:
        main(args.n, args.import_runs, dict(args.python))
