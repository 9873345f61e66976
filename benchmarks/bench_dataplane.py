"""Benchmark: the data plane through the local server, the released SDK and this one side by side, against floors.

One `e2b-local-api` process; each client phase (benchmarks/dataplane_client.py) run
by the released `e2b` 2.63.0's interpreter and by this repository's, alternately,
round after round, so that machine noise hits both alike. Figures (medians):
  true     `commands.run("true")`, against the floor: a fresh bubblewrap of the sandbox's
           shape running `/bin/bash -l -c true`, started by this Python (target 2x; this/released 1.0x)
  create   `Sandbox.create()` then its first `commands.run("true")` (target 150 ms)
  stream   SIZE of stdout through `on_stdout`: throughput against the same command piped locally
           (target 0.25x), the server's and the client's resident memory growth (target < 64 MiB)
  files    `files.write`/`files.read` of 100 MiB against a local file copy (target 0.5x; this/released 1.0x),
           and the server alone: curl (when it is there) and a raw socket moving the same bytes
  import   `import e2b`, `from e2b import Sandbox` in a fresh interpreter (this/released 1.0x)
`--smoke`: a few runs and small sizes, to show that it runs (tests/test_benchmarks.py); its figures mean nothing.
`--only files,import`: only those figures (true, create, stream, files, import), e.g. after a change to one of them.

    python benchmarks/bench_dataplane.py [--rounds N] [--runs N] [--released-python PATH] [--only PHASES] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.dataplane_client import stream_command  # noqa: E402
from tests.conformance.server_process import ServerProcess, running_server  # noqa: E402

CLIENT = Path(__file__).with_name("dataplane_client.py")
API_KEY = "e2b_local_dev_key"
MIB = 1 << 20
TRUE = ("/bin/bash", "-l", "-c", "true")
SDKS = ("released", "this")
PASSWD = "root:x:0:0:root:/root:/bin/bash\nuser:x:1000:1000::/home/user:/bin/bash\n"
GROUP = "root:x:0:\nuser:x:1000:\n"


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


# --- floors: what the machine does without the server and the SDK ---------------------------------


def sandbox_folder(work: Path) -> Path:
    """A sandbox's folders as the server lays them out, with its own /etc (the host's login profile is slow)."""
    root = work / "floor-sandbox"
    for name in ("home/user", "root", "tmp", "etc"):
        (root / name).mkdir(parents=True, exist_ok=True)
    (root / "etc" / "passwd").write_text(PASSWD)
    (root / "etc" / "group").write_text(GROUP)
    (root / "etc" / "hosts").write_text("127.0.0.1 localhost\n")
    (root / "etc" / "resolv.conf").write_text("")
    for folder in (work, root):  # bubblewrap's user sees these as others: they must let it through
        folder.chmod(0o755)
    (root / "home" / "user").chmod(0o777)
    return root


def floor_argv(root: Path, command: tuple[str, ...]) -> list[str]:
    """A fresh bubblewrap of the sandbox's shape: its own user, pid, ipc, uts and network namespaces."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SystemExit("bench-dataplane needs bubblewrap (apt-get install bubblewrap)")
    argv = [bwrap, "--unshare-user", "--uid", "1000", "--gid", "1000", "--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64"):
        path = Path("/") / name
        if path.is_symlink():
            argv += ["--symlink", os.readlink(path), f"/{name}"]
        elif path.is_dir():
            argv += ["--ro-bind", str(path), f"/{name}"]
    for name in ("home/user", "root", "tmp", "etc"):
        argv += ["--bind", str(root / name), f"/{name}"]
    argv += ["--proc", "/proc", "--dev", "/dev", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net"]
    return [*argv, "--die-with-parent", "--new-session", "--chdir", "/home/user", "--", *command]


def floor_true(root: Path, runs: int) -> list[float]:
    argv = floor_argv(root, TRUE)
    env = {"PATH": "/usr/bin:/bin", "HOME": "/home/user"}
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, env=env, check=True)
        samples.append(time.perf_counter() - start)
    return samples


def local_pipe(size: int) -> float:
    """Seconds for Python to read the stream command's output from a local pipe."""
    start = time.perf_counter()
    with subprocess.Popen(["/bin/bash", "-c", stream_command(size)], stdout=subprocess.PIPE, bufsize=0) as process:
        assert process.stdout is not None
        received = 0
        while chunk := process.stdout.read(1 << 16):
            received += len(chunk)
    assert received == size, received
    return time.perf_counter() - start


def local_copy(work: Path, size: int) -> float:
    """Seconds to copy a file of `size` bytes on this disk (from the page cache, as the server reads it)."""
    source, target = work / "copy-from", work / "copy-to"
    source.write_bytes(os.urandom(size))
    start = time.perf_counter()
    shutil.copyfile(source, target)
    took = time.perf_counter() - start
    source.unlink()
    target.unlink()
    return took


def fresh_buffer(size: int) -> float:
    """Seconds to fill a new `bytearray` of `size` bytes from 256 KiB chunks, as a client builds a body it returns.

    No read that returns new memory can beat it: on a machine where a page first touched is dear (this
    one is a Firecracker guest), it alone can take the read's whole budget.
    """
    chunk = os.urandom(256 << 10)
    start = time.perf_counter()
    content = bytearray()
    for _ in range(size // len(chunk)):
        content += chunk
    content += chunk[: size % len(chunk)]
    took = time.perf_counter() - start
    assert len(content) == size
    return took


def import_time(python: str, statement: str, runs: int) -> list[float]:
    """Fresh interpreters running `statement`, after one untimed run that fills the bytecode cache."""
    command = [python, *ISOLATED, "-c", statement]
    subprocess.run(command, check=True, cwd=tempfile.gettempdir(), env=clean_env())
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, check=True, cwd=tempfile.gettempdir(), env=clean_env())
        samples.append(time.perf_counter() - start)
    return samples


# --- through the server -------------------------------------------------------------------------------


# Each SDK's interpreter isolated (-I: no environment, no user site), its bytecode cached as in an installed
# package, for both alike, under a prefix of the run's own: the tree and the virtualenvs stay clean.
PYCACHE = Path(tempfile.gettempdir(), f"bench-dataplane-pycache-{os.getpid()}")
ISOLATED = ("-I", "-X", f"pycache_prefix={PYCACHE}")


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("E2B_", "PYTHON", "VIRTUAL_ENV"))}


def client(python: str, server: ServerProcess, phase: str, runs: int, size: int) -> dict[str, Any]:
    command = [python, *ISOLATED, str(CLIENT), server.url, API_KEY, phase, str(runs), str(size)]
    done = subprocess.run(command, capture_output=True, text=True, env=clean_env(), cwd=tempfile.gettempdir())
    if done.returncode != 0:
        sys.exit(
            f"benchmark: {phase} by {python} exited {done.returncode}:\n{done.stderr[-3000:]}{done.stdout[-1000:]}"
        )
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


@contextmanager
def files_sandbox(server: ServerProcess) -> Iterator[tuple[str, dict[str, str]]]:
    """A fresh sandbox's `/files` URL for /tmp/bench.bin and the headers that reach it, killed at the end."""
    created = httpx.post(f"{server.url}/sandboxes", headers={"X-API-Key": API_KEY}, json={"templateID": "base"})
    created.raise_for_status()
    sandbox = created.json()
    headers = {"E2b-Sandbox-Id": sandbox["sandboxID"]}
    if sandbox.get("envdAccessToken"):
        headers["X-Access-Token"] = sandbox["envdAccessToken"]
    try:
        yield f"{server.url}/files?path=/tmp/bench.bin&username=user", headers
    finally:
        httpx.delete(f"{server.url}/sandboxes/{sandbox['sandboxID']}", headers={"X-API-Key": API_KEY})


def curl_files(server: ServerProcess, work: Path, size: int, runs: int) -> dict[str, list[float]]:
    """The server alone: seconds for curl to upload `size` bytes (octet-stream) and download them to /dev/null."""
    source = work / "curl-from"
    source.write_bytes(os.urandom(size))
    times: dict[str, list[float]] = {"write": [], "read": []}
    with files_sandbox(server) as (url, headers):
        given = [option for name, value in headers.items() for option in ("-H", f"{name}: {value}")]
        upload = ["curl", "-sSf", "-o", "/dev/null", "-X", "POST", "-T", str(source), *given, url]
        upload += ["-H", "Content-Type: application/octet-stream"]
        download = ["curl", "-sSf", "-o", "/dev/null", *given, url]
        try:
            for _ in range(runs):
                for name, command in (("write", upload), ("read", download)):
                    start = time.perf_counter()
                    subprocess.run(command, check=True)
                    times[name].append(time.perf_counter() - start)
        finally:
            source.unlink()
    return times


def socket_files(server: ServerProcess, size: int, runs: int) -> dict[str, list[float]]:
    """The server alone, with a client that costs next to nothing: raw HTTP/1.1 on one kept-alive socket,
    the upload sent from memory in one `sendall`, the download read by `recv_into` a buffer made once.

    curl reads an upload from its file 64 KiB at a time, which bounds its upload below the server's speed.
    """
    data = os.urandom(size)
    room = memoryview(bytearray(size + (64 << 10)))
    times: dict[str, list[float]] = {"write": [], "read": []}
    with files_sandbox(server) as (url, headers):
        target = url.split("/", 3)[3]
        lines = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        upload = f"POST /{target} HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n{lines}"
        upload += f"Content-Length: {size}\r\n\r\n"
        download = f"GET /{target} HTTP/1.1\r\nHost: x\r\nAccept-Encoding: identity\r\n{lines}\r\n"
        host, port = server.url.rsplit("/", 1)[1].rsplit(":", 1)
        with socket.create_connection((host, int(port))) as sock:
            for _ in range(runs):
                start = time.perf_counter()
                sock.sendall(upload.encode())
                sock.sendall(data)
                _answer(sock, room, 200)
                times["write"].append(time.perf_counter() - start)
                start = time.perf_counter()
                sock.sendall(download.encode())
                assert _answer(sock, room, 200) == size
                times["read"].append(time.perf_counter() - start)
    return times


def _answer(sock: socket.socket, room: memoryview, status: int) -> int:
    """Read one answer (a `Content-Length` one, as the server's always are) into `room`; its body's length."""
    got, end = 0, None
    while end is None or got < end:
        n = sock.recv_into(room[got : got + (1 << 20)])
        if not n:
            raise SystemExit(f"benchmark: the server closed the connection after {got} bytes")
        got += n
        if end is None and (head_end := bytes(room[: min(got, 8192)]).find(b"\r\n\r\n")) >= 0:
            head = bytes(room[:head_end]).decode("latin-1").lower()
            if not head.startswith(f"http/1.1 {status}"):
                raise SystemExit(f"benchmark: the server answered {head.splitlines()[0]!r}")
            end = head_end + 4 + int(head.split("content-length:")[1].split("\r\n")[0])
    return end - (head_end + 4)


@contextmanager
def server_rss_growth(server: ServerProcess) -> Iterator[Callable[[], int]]:
    """The server's peak resident memory above where it was when the block began (sampled every 10 ms)."""
    before = peak = server.rss()
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.wait(0.01):
            peak = max(peak, server.rss())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield lambda: peak - before
    finally:
        stop.set()
        sampler.join()


def measure(pythons: dict[str, str], work: Path, args: argparse.Namespace) -> dict[str, Any]:
    figures: dict[str, Any] = {sdk: {"true": [], "create": [], "stream": [], "write": [], "read": []} for sdk in SDKS}
    growth: dict[str, dict[str, int]] = {
        sdk: {"server-stream": 0, "client-stream": 0, "server-files": 0} for sdk in SDKS
    }
    floor = sandbox_folder(work)
    figures["bwrap"] = []
    figures["curl"] = {"write": [], "read": []}
    figures["socket"] = {"write": [], "read": []}
    with running_server() as server:
        for _ in range(args.rounds):
            if "true" in args.only:
                figures["bwrap"] += floor_true(floor, args.runs)
            for sdk in SDKS:
                if "true" in args.only:
                    figures[sdk]["true"] += client(pythons[sdk], server, "true", args.runs, 0)["samples"]
                if "create" in args.only:
                    figures[sdk]["create"] += client(pythons[sdk], server, "create", args.creates, 0)["samples"]
                if "stream" in args.only:
                    with server_rss_growth(server) as grown:
                        streamed = client(pythons[sdk], server, "stream", 1, args.stream_bytes)
                    figures[sdk]["stream"] += streamed["samples"]
                    growth[sdk]["server-stream"] = max(growth[sdk]["server-stream"], grown())
                    growth[sdk]["client-stream"] = max(growth[sdk]["client-stream"], streamed["client_rss_growth"])
                if "files" not in args.only:
                    continue
                with server_rss_growth(server) as grown:
                    moved = client(pythons[sdk], server, "files", args.file_runs, args.file_bytes)
                figures[sdk]["write"] += moved["write"]
                figures[sdk]["read"] += moved["read"]
                growth[sdk]["server-files"] = max(growth[sdk]["server-files"], grown())
            if "files" in args.only and shutil.which("curl"):
                for name, times in curl_files(server, work, args.file_bytes, args.file_runs).items():
                    figures["curl"][name] += times
            if "files" in args.only:
                for name, times in socket_files(server, args.file_bytes, args.file_runs).items():
                    figures["socket"][name] += times
    if "stream" in args.only:
        figures["pipe"] = [local_pipe(args.stream_bytes) for _ in range(args.rounds)]
    if "files" in args.only:
        figures["copy"] = [local_copy(work, args.file_bytes) for _ in range(args.rounds)]
        figures["buffer"] = [fresh_buffer(args.file_bytes) for _ in range(args.rounds)]
    if "import" in args.only:
        for sdk in SDKS:
            figures[sdk]["import e2b"] = import_time(pythons[sdk], "import e2b", args.import_runs)
            statement = "from e2b import Sandbox"
            figures[sdk][statement] = import_time(pythons[sdk], statement, args.import_runs)
        figures["python"] = import_time(sys.executable, "pass", args.import_runs)
    figures["growth"] = growth
    return figures


def mib_s(size: int, samples: list[float]) -> float:
    return size / MIB / statistics.median(samples)


def report(f: dict[str, Any], args: argparse.Namespace) -> None:
    print(f"rounds: {args.rounds}, medians (ms unless said); released = e2b 2.63.0, this = this repository's e2b")
    if "true" in args.only:
        report_commands(f)
    if "create" in args.only:
        report_create(f)
    if "stream" in args.only:
        report_stream(f, args)
    if "files" in args.only:
        report_files(f, args)
    if "import" in args.only:
        report_imports(f)


def report_commands(f: dict[str, Any]) -> None:
    rel, this = f["released"], f["this"]
    bwrap = median_ms(f["bwrap"])
    print(f"  floor: fresh bwrap `bash -l -c true`  {bwrap:7.2f}")
    r, t = median_ms(rel["true"]), median_ms(this["true"])
    print(f"  {'true':7} released {r:7.2f}   this {t:7.2f}   this / released {t / r:.2f}x")
    true_rel, true_this = median_ms(rel["true"]) / bwrap, median_ms(this["true"]) / bwrap
    print(f"  run(true) / bwrap: released {true_rel:.2f}x, this {true_this:.2f}x (target: at most 2x)")


def report_create(f: dict[str, Any]) -> None:
    rel, this = f["released"], f["this"]
    r, t = median_ms(rel["create"]), median_ms(this["create"])
    print(f"  {'create':7} released {r:7.2f}   this {t:7.2f}   this / released {t / r:.2f}x")
    print(f"  create-to-first-command: released {r:.0f} ms, this {t:.0f} ms (target: at most 150 ms)")


def report_stream(f: dict[str, Any], args: argparse.Namespace) -> None:
    pipe = mib_s(args.stream_bytes, f["pipe"])
    size = f"{args.stream_bytes / MIB:.0f} MiB"
    print(f"  stream {size} of stdout: local pipe {pipe:.0f} MiB/s")
    for sdk in SDKS:
        rate, grown = mib_s(args.stream_bytes, f[sdk]["stream"]), f["growth"][sdk]
        print(
            f"    {sdk:8} {rate:6.0f} MiB/s = {rate / pipe:.2f}x of the pipe (target 0.25x);"
            f" RSS growth: server {grown['server-stream'] / MIB:.1f} MiB, client {grown['client-stream'] / MIB:.1f} MiB"
            " (target < 64 MiB)"
        )


def report_files(f: dict[str, Any], args: argparse.Namespace) -> None:
    rel, this = f["released"], f["this"]
    copy = mib_s(args.file_bytes, f["copy"])
    size = f"{args.file_bytes / MIB:.0f} MiB"
    buffer = mib_s(args.file_bytes, f["buffer"])
    print(f"  files of {size}: local copy {copy:.0f} MiB/s")
    print(f"    a new bytearray filled: {buffer:.0f} MiB/s ({buffer / copy:.2f}x of the copy): a read's ceiling")
    for sdk in SDKS:
        w, r = mib_s(args.file_bytes, f[sdk]["write"]), mib_s(args.file_bytes, f[sdk]["read"])
        print(
            f"    {sdk:8} write {w:6.0f} MiB/s ({w / copy:.2f}x), read {r:6.0f} MiB/s ({r / copy:.2f}x) of the copy"
            f" (target 0.5x); server RSS growth {f['growth'][sdk]['server-files'] / MIB:.1f} MiB"
        )
    alone = {"curl": "the server alone, a process start included", "socket": "the server alone, a raw socket"}
    for client, what in alone.items():
        if f[client]["write"]:
            w, r = mib_s(args.file_bytes, f[client]["write"]), mib_s(args.file_bytes, f[client]["read"])
            print(
                f"    {client:8} write {w:6.0f} MiB/s ({w / copy:.2f}x), read {r:6.0f} MiB/s ({r / copy:.2f}x)"
                f" of the copy: {what}"
            )
    for name in ("write", "read"):
        ratio = statistics.median(this[name]) / statistics.median(rel[name])
        print(f"  files.{name} time, this / released: {ratio:.2f}x (target: at most 1.0x)")


def report_imports(f: dict[str, Any]) -> None:
    rel, this = f["released"], f["this"]
    print(f"  python -I -c pass: {median_ms(f['python']):.1f}")
    for name in ("import e2b", "from e2b import Sandbox"):
        r, t = median_ms(rel[name]), median_ms(this[name])
        print(f"  {name + ', this / released:':38} {r:6.1f} -> {t:6.1f}   {t / r:.2f}x (target: at most 1.0x)")


PHASES = ("true", "create", "stream", "files", "import")


def phases(text: str) -> tuple[str, ...]:
    chosen = tuple(name.strip() for name in text.split(",") if name.strip())
    unknown = [name for name in chosen if name not in PHASES]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(f"phases are some of {', '.join(PHASES)} (got {text!r})")
    return chosen


def released_interpreter(given: str | None, work: Path) -> str:
    if given:
        return given
    from tests.conformance.test_released_sdk import build_released_venv

    build_released_venv(work / "released")
    if (work / "released" / "offline").exists():
        raise SystemExit(f"the released SDK could not be installed: {(work / 'released' / 'offline').read_text()}")
    return str(work / "released" / "venv" / "bin" / "python")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds, each running every SDK's phases (default 3)")
    parser.add_argument("--runs", type=int, default=50, help="commands.run('true') per round and SDK (default 50)")
    parser.add_argument("--creates", type=int, default=10, help="creates per round and SDK (default 10)")
    parser.add_argument("--stream-bytes", type=int, default=1 << 30, help="stdout streamed (default 1 GiB)")
    parser.add_argument("--file-bytes", type=int, default=100 * MIB, help="file written and read (default 100 MiB)")
    parser.add_argument("--file-runs", type=int, default=2, help="writes and reads per round and SDK (default 2)")
    parser.add_argument("--import-runs", type=int, default=20, help="fresh interpreters per import (default 20)")
    parser.add_argument("--released-python", help="the released SDK's interpreter (default: build its virtualenv)")
    parser.add_argument(
        "--only", type=phases, default=PHASES, help=f"comma-separated phases to run (default all: {','.join(PHASES)})"
    )
    parser.add_argument("--smoke", action="store_true", help="one round of few runs and small sizes: it runs")
    args = parser.parse_args()
    if args.smoke:
        args.rounds, args.runs, args.creates, args.file_runs, args.import_runs = 1, 3, 2, 1, 2
        args.stream_bytes, args.file_bytes = 4 * MIB, 4 * MIB
    work = Path(tempfile.mkdtemp(prefix="bench-dataplane-"))
    try:
        pythons = {"released": released_interpreter(args.released_python, work), "this": sys.executable}
        report(measure(pythons, work, args), args)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(PYCACHE, ignore_errors=True)


if __name__ == "__main__":
    main()
