"""Run the shell sessions that the documentation shows, as a user would type them.

The README's command-line and local-server sections and the docs pages that
show the same kind of session (tests/test_readme.py, tests/test_docs.py) are
run by one machinery: their `sh` and `console` blocks, in order, by one bash,
in a copy of this repository, after the README's first command. An `sh`
command must exit 0; a `console` command must print what is shown, up to the
sandbox ids and timestamps, which differ per run. A server command
(`e2b-local-api ...`, `python3 -m nox -s serve`) is started here instead, on a
free 127.0.0.1 port that replaces the documented 3000 everywhere.
"""

from __future__ import annotations

import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.signal_dispositions import default_dispositions

ROOT = Path(__file__).resolve().parents[1]
COPIED = ("README.md", "noxfile.py", "pyproject.toml", "requirements", "packages")
DOCUMENTED_PORT = "3000"
SANDBOX_ID = re.compile(r"\bi[0-9a-f]{20}\b")
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ")
MARKER = "@@readme-step-done@@"
# A step may build an environment (nox -s dev); everything else takes seconds.
STEP_TIMEOUT = 600

needs_curl = pytest.mark.skipif(shutil.which("curl") is None, reason="the documented sessions use curl")


@dataclass
class Step:
    command: str
    expected: list[str] | None  # console blocks: the output shown; sh blocks: None (exit 0 is enough)


def _complete(chunk: str) -> bool:
    return subprocess.run(["bash", "-n", "-c", chunk], capture_output=True).returncode == 0


def steps(text: str) -> list[Step]:
    found: list[Step] = []
    for lang, body in re.findall(r"```(sh|console)\n(.*?)```", text, flags=re.S):
        if lang == "console":
            for line in body.splitlines():
                if line.startswith("$ "):
                    found.append(Step(line[2:], []))
                else:
                    expected = found[-1].expected
                    assert expected is not None, f"output before any command: {line!r}"
                    expected.append(line)
        else:
            chunk = ""
            for line in body.splitlines():
                chunk += line + "\n"
                if chunk.strip() and _complete(chunk):
                    found.append(Step(chunk.rstrip("\n"), None))
                    chunk = ""
            assert not chunk.strip(), f"incomplete shell command: {chunk!r}"
    return found


def is_server(command: str) -> bool:
    words = command.split("#", 1)[0].split()
    return words[:1] == ["e2b-local-api"] or (words[:4] == ["python3", "-m", "nox", "-s"] and words[4:5] == ["serve"])


def free_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return str(sock.getsockname()[1])


def environment() -> dict[str, str]:
    """The user's environment: no E2B settings, and the test's own virtualenv off PATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("E2B_", "VIRTUAL_ENV", "NOX_"))}
    ours = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != ours)
    env["NO_COLOR"] = "1"
    return env


def user_python_has_nox() -> bool:
    """`python3` as the README's first command leaves it: with nox and uv."""
    found = subprocess.run(["python3", "-c", "import nox"], env=environment(), capture_output=True)
    return found.returncode == 0


needs_nox = pytest.mark.skipif(
    not user_python_has_nox(), reason="python3 on PATH lacks nox: run the README's first command"
)


class Shell:
    """One bash, fed one command at a time, like a terminal: state carries over."""

    def __init__(self, cwd: Path) -> None:
        self.proc = subprocess.Popen(
            ["bash", "--noprofile", "--norc"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=environment(),
            text=True,
            start_new_session=True,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def run(self, command: str) -> tuple[int, list[str]]:
        assert self.proc.stdin is not None
        # `(exit $s)` gives the next command the status in $?, as a terminal would.
        self.proc.stdin.write(f"{command}\n__s=$?; printf '\\n{MARKER} %d\\n' $__s; (exit $__s)\n")
        self.proc.stdin.flush()
        output: list[str] = []
        while True:
            line = self.lines.get(timeout=STEP_TIMEOUT)
            if line is None:
                raise AssertionError(f"bash ended during {command!r}: {output}")
            if line.startswith(MARKER):
                if output and output[-1] == "":
                    output.pop()  # the newline printed before the marker
                return int(line.split()[1]), output
            output.append(line.rstrip("\n").rstrip())

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


@dataclass
class Server:
    proc: subprocess.Popen[bytes]
    url: str

    def wait_ready(self) -> None:
        deadline = time.monotonic() + STEP_TIMEOUT
        while True:
            try:
                if httpx.get(f"{self.url}/_local/health", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            assert self.proc.poll() is None, "the server command ended"
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.2)

    def stop(self) -> None:
        # The process group: nox runs e2b-local-api as its child.
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def start_server(command: list[str], cwd: Path, port: str) -> Server:
    with default_dispositions():  # `stop` sends SIGTERM: the server must not inherit an ignored one
        proc = subprocess.Popen(
            command,
            cwd=cwd,
            env=environment(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    server = Server(proc, f"http://127.0.0.1:{port}")
    try:
        server.wait_ready()
    except BaseException:
        server.stop()
        raise
    return server


def with_port(command: str, port: str) -> list[str]:
    """A documented server command, on `port` instead of the documented one."""
    words = command.split("#", 1)[0].split()
    if words[0] == "e2b-local-api":
        return [str(Path(sys.executable).parent / "e2b-local-api"), *words[1:], "--port", port]
    return [*words, *([] if "--" in words else ["--"]), "--port", port]


def expected_pattern(lines: list[str], known_ids: dict[str, str]) -> str:
    """A regex for the output shown: timestamps match any, each shown sandbox id stands for one real id."""
    groups: dict[str, str] = {}
    parts: list[str] = []
    for line in lines:
        pattern = ""
        position = 0
        for match in re.finditer(f"{SANDBOX_ID.pattern}|{TIMESTAMP.pattern}", line.rstrip()):
            pattern += re.escape(line[position : match.start()])
            token = match.group()
            if TIMESTAMP.fullmatch(token):
                pattern += TIMESTAMP.pattern
            elif token in known_ids:
                pattern += re.escape(known_ids[token])
            elif token in groups:
                pattern += f"(?P={groups[token]})"
            else:
                groups[token] = f"id{len(groups)}"
                pattern += f"(?P<{groups[token]}>{SANDBOX_ID.pattern})"
            position = match.end()
        parts.append(pattern + re.escape(line.rstrip()[position:]))
    return "\n".join(parts)


def learn_ids(lines: list[str], actual: str, known_ids: dict[str, str]) -> None:
    pattern = expected_pattern(lines, known_ids)
    match = re.fullmatch(pattern, actual)
    assert match is not None
    shown = [token for line in lines for token in SANDBOX_ID.findall(line) if token not in known_ids]
    for token in dict.fromkeys(shown):
        known_ids[token] = match.group(f"id{list(dict.fromkeys(shown)).index(token)}")


def run_blocks(text: str, label: str, workdir: Path, port: str, servers: list[Server]) -> None:
    """Run the `sh` and `console` blocks of `text` in one bash; the servers they start go into `servers`.

    `label` names the text in failures (a README section, a docs page). The
    caller stops the servers.
    """
    shell = Shell(workdir)
    known_ids: dict[str, str] = {}
    try:
        for step in steps(text):
            command = step.command.replace(f"127.0.0.1:{DOCUMENTED_PORT}", f"127.0.0.1:{port}")
            if is_server(command):
                servers.append(start_server(with_port(command, port), workdir, port))
                continue
            status, output = shell.run(command)
            if step.expected is None:
                assert status == 0, f"{label}: `{command}` exited {status}:\n" + "\n".join(output)
                continue
            actual = "\n".join(output)
            expected = [line.replace(f"127.0.0.1:{DOCUMENTED_PORT}", f"127.0.0.1:{port}") for line in step.expected]
            pattern = expected_pattern(expected, known_ids)
            assert re.fullmatch(pattern, actual), (
                f"{label}: `{command}` printed\n{actual}\n--- the documentation shows ---\n" + "\n".join(step.expected)
            )
            learn_ids(expected, actual, known_ids)
    finally:
        shell.close()


def copy_repository(destination: Path) -> Path:
    """A copy of the repository, without built environments, as a fresh clone would be."""
    ignore = shutil.ignore_patterns(".nox", "__pycache__", "*.egg-info", ".venv", ".mypy_cache", ".ruff_cache")
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, destination / name, ignore=ignore)
        else:
            shutil.copy2(source, destination / name)
    return destination
