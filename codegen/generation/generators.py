"""Run the code generators on the filtered spec, hermetically, and collect their output.

How it works, and why: docs/maintainers/design.md, "codegen/generation/generators.py".
"""

from __future__ import annotations

import functools
import json
import math
import os
import queue
import re
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from codegen.generation.protoc import protoc_args
from toolkit.cache_folder import cache_root
from toolkit.errors import Problem, ToolError
from toolkit.paths import ENVD_DIR, SPEC, Project
from toolkit.signals import raise_lost_signal

# openapi-python-client's settings for the generated client, under codegen/ (JSON: read without a YAML
# parser on the way to the generators' start).  No post_hooks there: `client_config` adds them as it runs
# the generator.  Written into the scratch folder from the run's inputs.
CLIENT_CONFIG = "generation/openapi_python_client.json"
# -I: no PYTHON* variables, no user site-packages, not the cwd on sys.path.
PYTHON = (sys.executable, "-I", "-X", "utf8")
# Each tool's wall-clock limit, from when it is handed its arguments: a generation takes 1 to 2 s, and a
# spec within the reader's bounds (codegen/openapi/plain_yaml.py) a few more.  A tool still running at its
# limit is stopped with every process it started, and the run ends with exit 2.
TOOL_SECONDS = 120.0
TOOL_SECONDS_ENV = "E2B_CODEGEN_TOOL_SECONDS"  # another limit, in seconds (a slow machine; the tests)


def tool_seconds() -> float:
    """The tools' wall-clock limit: TOOL_SECONDS, or what E2B_CODEGEN_TOOL_SECONDS says."""
    said = os.environ.get(TOOL_SECONDS_ENV)
    if said is None:
        return TOOL_SECONDS
    try:
        seconds = float(said)
    except ValueError:
        seconds = math.nan
    if not (0 < seconds < math.inf):
        raise ToolError(
            Problem(
                f"{TOOL_SECONDS_ENV} must be a number of seconds above 0, not {said!r}: unset it for {TOOL_SECONDS:g}"
            )
        )
    return seconds


@contextmanager
def private_scratch(parent: Path) -> Iterator[Path]:
    """A fresh folder only this user can enter, under `parent` (codegen's own), removed afterwards."""
    parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = parent.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise ToolError(
            Problem(
                f"{parent} is not a folder of this user's: codegen's scratch folders go there "
                "(point E2B_CODEGEN_CACHE at a folder of your own)"
            )
        )
    if stat.S_IMODE(info.st_mode) & 0o077:
        os.chmod(parent, 0o700)
    scratch = Path(tempfile.mkdtemp(prefix="run-", dir=parent))  # mode 0700
    try:
        for folder in ("home", "tmp"):
            (scratch / folder).mkdir(mode=0o700)
        yield scratch
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def tool_env(scratch: Path) -> dict[str, str]:
    """The whole environment a generator or ruff sees: nothing of the caller's.

    PATH starts with the scratch folder's bin/, where `client_config` links the pinned ruff.
    """
    return {
        "PATH": os.pathsep.join([str(scratch / "bin"), os.defpath]),
        "HOME": str(scratch / "home"),
        "TMPDIR": str(scratch / "tmp"),
        "LC_ALL": "C.UTF-8",
        "NO_COLOR": "1",
    }


# A tool's output as text whatever bytes it holds (a path in a message, say): decoding never fails.
_TEXT: dict[str, Any] = {"encoding": "utf-8", "errors": "backslashreplace"}


def _finish(tool: str, process: subprocess.Popen[str], seconds: float) -> None:
    try:
        output, _ = process.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        _stop_and_reap(process)
        raise ToolError(past_its_limit(tool, seconds)) from None
    if process.returncode != 0:
        raise ToolError(tool_failure(tool, process.returncode, output))


def _stop_and_reap(process: subprocess.Popen[str]) -> None:
    """Kill the tool's process group and reap the tool; what is left of its output is read for a moment at most.

    A process that left the group (`setsid`) may hold the pipe open: the run does not wait for it.
    """
    _kill_group(process)
    try:
        process.communicate(timeout=CLOSE_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.wait()


def past_its_limit(tool: str, seconds: float) -> Problem:
    return Problem(
        f"{tool} ran past its {seconds:g} s limit and was stopped, with every process it started "
        f"({TOOL_SECONDS_ENV} sets the limit)"
    )


CLIENT = "openapi-python-client"
WIRE = "datamodel-code-generator"
# envd's protos: grpcio-tools' protoc, which runs the two plugins (codegen/generation/protoc.py).
PROTOC = "protoc"
# envd's HTTP API (envd.yaml, filtered): a second openapi-python-client, in an interpreter of its own.
ENVD_HTTP = f"{CLIENT} (envd.yaml)"
ENVD_HTTP_DISPLAY = f"{ENVD_DIR}/envd.yaml"  # where its operations are, as its failures name them
# What a generator imports before its arguments are known (measured with -X importtime).
_PRELOAD = {
    CLIENT: ("openapi_python_client.cli",),
    WIRE: (
        "datamodel_code_generator.__main__",
        "datamodel_code_generator.model.pydantic_v2",
        "datamodel_code_generator.parser.openapi",
    ),
    PROTOC: ("grpc_tools.protoc",),
    ENVD_HTTP: ("openapi_python_client.cli",),
}
# Run as a script (its own module, so that ruff and mypy read it): never imported by codegen.
LAUNCHER = Path(__file__).resolve().with_name("launcher.py")


def launcher(tool: str) -> list[str]:
    """The command that starts `tool`'s interpreter: it imports the generator, then waits for its arguments."""
    return [*PYTHON, str(LAUNCHER), *_PRELOAD[tool]]


class Toolchain(Protocol):
    """What a run needs of its tools (codegen/generation/stage.py): the generators, and ruff to format.

    `Generators` runs them.  Whatever else answers for them (the test suite's memo,
    tests/codegen/memo_toolchain.py) stands behind this interface, so every line of codegen's own runs.
    """

    scratch: Path  # the run's private scratch folder: the tools read and write there
    handed_at: float | None  # time.perf_counter() when the generators were given their arguments

    def start(self) -> None:
        """Make ready to run as soon as their arguments come (`Generators` starts their interpreters)."""

    def start_jobs(self, jobs: list[tuple[str, list[str]]]) -> None:
        """Hand each generator its arguments (`python -m` form): from now on they run, side by side."""

    def first_finished(self) -> str:
        """The name of the generator that finished first, once one has (every call: the same)."""

    def wait(self, tool: str) -> None:
        """Until `tool` has finished; its failure raised as a `ToolError`."""

    def format(self, folder: Path) -> None:
        """Ruff formats `folder` (`format_python`)."""

    def close(self) -> None:
        """Stop whatever still runs: nothing outlives the run."""


class Generators:
    """The generators' interpreters for one run, in its private scratch folder: the `Toolchain` that runs them.

    Once given its arguments, each generator has a thread of its own that reads its output to its
    end (so that neither can stall on a full pipe) and says when it is done: `first_finished` tells the
    caller which finished first, `wait` gives one's verdict.
    """

    def __init__(
        self, scratch: Path, *, seconds: float | None = None, command: Callable[[str], list[str]] | None = None
    ) -> None:
        """`seconds`: each tool's limit (default: `tool_seconds()`); `command`: what starts a tool (`launcher`)."""
        self.scratch = scratch
        self.seconds = tool_seconds() if seconds is None else seconds
        self._command = launcher if command is None else command
        self._started: dict[str, subprocess.Popen[str]] = {}  # waiting for their arguments
        self._running: dict[str, _Running] = {}  # given their arguments
        self._done: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._first: str | None = None
        self.handed_at: float | None = None  # time.perf_counter() when they were given their arguments

    def start(self) -> None:
        """Start them now, so that they import themselves while codegen prepares the spec.

        One not handed a job ends at once when the run is done (`close`): protoc when there are no protos.
        """
        for tool in _PRELOAD:
            if tool not in self._started:
                self._started[tool] = self._launch(tool)

    def _launch(self, tool: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self._command(tool),
            cwd=self.scratch,
            env=tool_env(self.scratch),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            # Its own process group: stopping the run stops the post hooks' shell and ruff too.
            process_group=0,
            **_TEXT,
        )

    def start_jobs(self, jobs: list[tuple[str, list[str]]]) -> None:
        """Hand each its arguments (`python -m` form): from now on they run, side by side."""
        self.handed_at = time.perf_counter()
        for tool, args in jobs:
            process = self._started.pop(tool, None) or self._launch(tool)
            assert process.stdin is not None
            try:
                process.stdin.write(json.dumps(args) + "\n")
                process.stdin.close()
            except BrokenPipeError:
                pass  # it died importing: its output says why
            process.stdin = None  # written and closed: communicate() has nothing more to send
            running = _Running(tool, process, self._done, self.seconds)
            self._running[tool] = running
            start_helper(running.waiter)

    def first_finished(self) -> str:
        """The name of the generator that finished first, as soon as one has (every call: the same)."""
        while self._first is None:
            raise_lost_signal()
            try:
                self._first = self._done.get(timeout=SIGNAL_POLL)  # in slices: see `join_helper`
            except queue.Empty:
                pass
        return self._first

    def wait(self, tool: str) -> None:
        """Until `tool` has finished; its failure said as it said it."""
        running = self._running[tool]
        join_helper(running.waiter)
        if running.problem is not None:
            raise ToolError(running.problem)

    def format(self, folder: Path) -> None:
        format_python(folder, self.scratch, self.seconds)

    def close(self) -> None:
        """Stop whatever is still running or waiting (a failed run, Ctrl-C, SIGTERM), with what it started.

        Killed, a generator's output ends at once and so does the thread that reads it; that wait is
        bounded all the same (a process that left the group could keep the pipe open): the threads are
        daemons, and an interrupted run ends with `os._exit` once its clean-up is done (codegen/__main__.py).
        """
        for process in self._started.values():
            _stop_and_reap(process)
        deadline = time.monotonic() + CLOSE_TIMEOUT
        for running in self._running.values():
            _kill_group(running.process)
            join_helper(running.waiter, timeout=max(0.0, deadline - time.monotonic()))
        self._started.clear()
        self._running.clear()


def _kill_group(process: subprocess.Popen[str]) -> None:
    """SIGKILL to the tool's process group (its post hooks' shell and ruff); gone already is fine."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class _Running:
    """A generator given its arguments, and the thread that waits for it to end."""

    def __init__(
        self, tool: str, process: subprocess.Popen[str], done: queue.SimpleQueue[str], seconds: float = TOOL_SECONDS
    ) -> None:
        self.tool, self.process, self.seconds = tool, process, seconds
        # A failure until the thread has seen the tool succeed: no verdict is never success.
        self.problem: Problem | None = Problem(f"{tool} ended without a verdict")
        self.waiter = threading.Thread(target=self._wait, args=(done,), name=f"codegen-{tool}", daemon=True)

    def _wait(self, done: queue.SimpleQueue[str]) -> None:
        try:
            _finish(self.tool, self.process, self.seconds)
            self.problem = None
        except ToolError as failed:
            self.problem = failed.problems[0]
        except Exception as error:  # said as a problem of the run, never a traceback from a thread
            self.problem = Problem(f"{self.tool}: its output could not be read: {type(error).__name__}: {error}")
            _kill_group(self.process)  # nobody reads it any more: it must not wait on a full pipe
            self.process.wait()
        finally:
            done.put(self.tool)


# Helper threads and signals.  A process's signal goes to any thread that does not block it, and
# Python runs its handler in the main thread only, when that thread next runs Python code: a signal
# a helper took does not wake the main thread from a wait without a timeout, and then nothing does.
# So helpers block SIGINT and SIGTERM from their first instruction (`start_helper`), and the main thread
# waits for them in slices (`join_helper`): Ctrl-C and SIGTERM are handled within one, however the
# helpers stand (reading a pipe, waiting on the import lock, stuck).
STOP_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM})
SIGNAL_POLL = 0.05  # seconds: the longest a wait in the main thread defers a signal
CLOSE_TIMEOUT = 1.0  # seconds for the generators' threads to end once the generators are killed


def start_helper(thread: threading.Thread) -> None:
    """Start `thread` with Ctrl-C and SIGTERM blocked, so that it never takes them from the main thread.

    A thread starts with its creator's signal mask: the main thread blocks both around the start,
    so that there is no moment when the helper could take one; a signal that arrives meanwhile
    waits and is the main thread's as soon as it unblocks them.  A process started from a helper
    would inherit the mask: start none from them.
    """
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        thread.start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def join_helper(thread: threading.Thread, timeout: float | None = None) -> bool:
    """Wait for `thread` (at most `timeout` seconds), in slices so that a signal's handler runs within one.

    True when the thread has ended.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    while thread.is_alive():
        if deadline is None:  # a wait with no end of its own (a bounded one is a clean-up's: it goes on)
            raise_lost_signal()
        left = SIGNAL_POLL if deadline is None else min(SIGNAL_POLL, deadline - time.monotonic())
        if left <= 0:
            return False
        thread.join(left)
    return True


# What `open_generators` makes for a scratch folder: `Generators`, unless this process was handed
# another toolchain (`using_toolchain`).
_make_toolchain: Callable[[Path], Toolchain] = Generators


@contextmanager
def using_toolchain(make: Callable[[Path], Toolchain]) -> Iterator[None]:
    """Every run in this process uses `make(scratch)` for its tools while the block runs (the test suite's memo)."""
    global _make_toolchain
    before, _make_toolchain = _make_toolchain, make
    try:
        yield
    finally:
        _make_toolchain = before


@contextmanager
def open_generators(project: Project) -> Iterator[Toolchain]:
    """A private scratch folder under the cache folder's `scratch/`, and the generators, started, for it.

    Nothing outlives the block: the processes are stopped and the folder removed.
    """
    with private_scratch(cache_root(project) / "scratch") as scratch:
        generators = _make_toolchain(scratch)
        try:
            generators.start()
            yield generators
        finally:
            generators.close()


# Lines that frame a tool's message rather than say what went wrong.
_NOISE = re.compile(
    r"^(Generating |Warning\(s\) encountered|If you believe|Traceback |File \"|During handling|The above exception"
    r"|[\[\]{}\"^~]|\d+ files? (reformatted|left unchanged))"
)
_OBJECT_REPR = re.compile(r"\s*<[\w.]+ object at 0x[0-9a-fA-F]+>")
_OPERATION = re.compile(r"^(?:WARNING|ERROR) parsing (\w+) (\S+) within \S+")


def tool_failure(tool: str, exit_code: int, output: str) -> Problem:
    """One or two lines: the tool, its last meaningful line, and the operation or file it names.

    An operation is named in the spec the tool read: envd's HTTP API for ENVD_HTTP, the control plane's else.
    """
    spec = ENVD_HTTP_DISPLAY if tool == ENVD_HTTP else SPEC
    where = None
    message = ""
    for raw in output.splitlines():
        line = _OBJECT_REPR.sub("", raw).strip()
        if not line or _NOISE.match(line):
            continue
        operation = _OPERATION.match(line)
        if operation:
            where = f"{spec} ({operation.group(1)} {operation.group(2)})"
            continue
        message = line.removeprefix("error: ")
    if not message:
        message = f"exited {exit_code} without saying why"
    return Problem(f"{tool} failed (exit {exit_code}): {message}", where=where)


def check_syntax(folder: Path, shown_as: str = "") -> None:
    """Every generated module must parse; said with its file and line (`shown_as` + its path under `folder`)."""
    for path in sorted(folder.rglob("*.py")):
        data = path.read_bytes()
        try:
            # Compiled, not parsed into Python objects: a third faster, and it refuses no less.
            compile(data, str(path), "exec", dont_inherit=True)
        except SyntaxError as error:
            rel = (Path(shown_as) / path.relative_to(folder)).as_posix()
            raise ToolError(
                Problem(
                    f"generated code does not parse: {error.msg}",
                    where=f"{rel}:{error.lineno}",
                    remedy="fix the template or the pipeline that wrote it",
                )
            ) from None


FILTERED_SPEC = "openapi.filtered.json"  # in the scratch folder: what both generators read
# In the scratch folder: envd's filtered HTTP API, and the envd client generator's output.
ENVD_HTTP_SPEC = "envd.filtered.json"
ENVD_HTTP_OUTPUT = "envd_http"


def filtered_json(spec: Mapping[str, Any]) -> bytes:
    """The filtered spec as the generators read it."""
    return (json.dumps(spec, indent=2, ensure_ascii=False) + "\n").encode()


def write_filtered_spec(spec: Mapping[str, Any], scratch: Path) -> Path:
    path = scratch / FILTERED_SPEC
    path.write_bytes(filtered_json(spec))
    return path


def client_args(spec_path: Path, out: Path, templates: Path | None, config: Path) -> list[str]:
    """openapi-python-client, package only (--meta none); `config` is the only configuration it reads."""
    args = [
        "openapi_python_client",
        "generate",
        "--path",
        str(spec_path),
        "--meta",
        "none",
        "--config",
        str(config),
        "--output-path",
        str(out),
        "--fail-on-warning",
    ]
    if templates is not None and templates.is_dir() and any(templates.iterdir()):
        args += ["--custom-template-path", str(templates)]
    return args


def wire_model_args(spec_path: Path, out: Path) -> list[str]:
    """datamodel-code-generator: pydantic v2 models of the wire schemas, one module, unformatted."""
    return [
        "datamodel_code_generator",
        "--ignore-pyproject",
        "--no-formatters",
        "--input",
        str(spec_path),
        "--input-file-type",
        "openapi",
        "--output",
        str(out),
        "--output-model-type",
        "pydantic_v2.BaseModel",
        "--target-python-version",
        "3.10",
        "--disable-timestamp",
        "--use-annotated",
        "--field-constraints",
        "--use-standard-collections",
        "--use-union-operator",
        "--use-double-quotes",
        "--use-schema-description",
        "--custom-file-header",
        "# wire models",
    ]


def client_config(base: Path, scratch: Path) -> Path:
    """The client generator's config as it runs: the committed settings, and post hooks that format its output.

    The hooks are `ruff_passes` on the output folder.  They call `ruff` by name (the
    generator splits a hook at its first space to find the program), so the pinned
    binary is linked as bin/ruff in the scratch folder, first on the tools' PATH.
    """
    (scratch / "bin").mkdir(mode=0o700, exist_ok=True)
    link = scratch / "bin" / "ruff"
    link.unlink(missing_ok=True)  # a second generation in the same scratch folder
    link.symlink_to(ruff_binary())
    try:
        settings = json.loads(base.read_bytes())
    except ValueError as error:
        raise ToolError(Problem(f"codegen/{CLIENT_CONFIG} is not JSON: {error}")) from None
    if not isinstance(settings, dict):
        raise ToolError(Problem(f"codegen/{CLIENT_CONFIG} is not a JSON object"))
    hooks = [shlex.join(command) for command in ruff_passes("ruff", ".")]
    path = scratch / "openapi_python_client.run.yml"
    path.write_text(json.dumps({**settings, "post_hooks": hooks}, indent=2) + "\n", encoding="utf-8")  # JSON is YAML
    return path


def start_generating(
    spec_path: Path,
    generators: Toolchain,
    templates: Path | None,
    config: Path,
    protos: Mapping[str, bytes] | None = None,
    envd_http: Path | None = None,
) -> tuple[Path, Path]:
    """Hand the generators their input; return where the client package and the models module will be.

    Both generators get the filtered spec; protoc, envd's `protos` (by their path under spec/envd/)
    when there are any, its output going to `protoc.OUTPUT` in the scratch folder; a second client
    generator, envd's filtered HTTP API at `envd_http` when there is one, its package going to
    ENVD_HTTP_OUTPUT there (the same templates and config as the control plane's client).
    `config` is the client generator's committed config (`client_config` adds the post hooks).
    They are independent and single-threaded; they run in `generators.scratch` (from `private_scratch`).
    """
    client, wire = generators.scratch / "client", generators.scratch / "wire_models.py"
    run_config = client_config(config, generators.scratch)
    jobs = [
        (CLIENT, client_args(spec_path, client, templates, run_config)),
        (WIRE, wire_model_args(spec_path, wire)),
    ]
    if protos:
        jobs.append((PROTOC, protoc_args(protos, generators.scratch)[0]))
    if envd_http is not None:
        jobs.append((ENVD_HTTP, client_args(envd_http, generators.scratch / ENVD_HTTP_OUTPUT, templates, run_config)))
    generators.start_jobs(jobs)
    return client, wire


def wait_for_client(generators: Toolchain, client: Path, shown_as: str, tool: str = CLIENT) -> None:
    """Until the client generator (`tool`: CLIENT, or ENVD_HTTP) is done; code of it that does not parse is
    named by file and line.

    Whether its post hooks failed on that code (ruff would say less) or not: ruff, targeting
    Python 3.10, passes syntax this Python cannot parse.
    """
    try:
        generators.wait(tool)
    except ToolError:
        if client.is_dir():
            check_syntax(client, shown_as)
        raise
    check_syntax(client, shown_as)


def generate(spec_path: Path, generators: Toolchain, templates: Path | None, config: Path) -> tuple[Path, Path]:
    """Run both generators on the filtered spec, side by side, to their end; the client comes out formatted."""
    client, wire = start_generating(spec_path, generators, templates, config)
    wait_for_client(generators, client, ".")
    generators.wait(WIRE)
    return client, wire


# --isolated ignores config files, not ignore files: an `.ignore` or `.gitignore` above the cache folder,
# or ruff's default excludes (`dist`, `venv`, ... which a spec's tag can name), would leave files out.
RUFF_SETTINGS = (
    "--isolated",
    "--no-cache",
    "--no-respect-gitignore",
    "--exclude",
    ".git",
    "--target-version",
    "py310",
    "--line-length",
    "100",
    # The SDK's own package sorts as first-party, as in the project's ruff: the twins' imports then
    # pass its check (a twin's folder lacks e2b/__init__.py, from which ruff would tell).
    "--config",
    "lint.isort.known-first-party = ['e2b']",
)


def ruff_passes(ruff: str, target: str) -> list[list[str]]:
    """The one formatting of generated code: unused imports dropped and imports sorted, then formatted."""
    return [
        [ruff, "check", "--fix-only", "--quiet", *RUFF_SETTINGS, "--select", "I,F401", target],
        [ruff, "format", *RUFF_SETTINGS, target],  # not --quiet: it would hide ruff's errors too
    ]


@functools.cache
def ruff_binary() -> str:
    """The pinned ruff's executable (finding it costs milliseconds: once per run)."""
    from ruff import find_ruff_bin  # type: ignore[import-untyped]  # the pinned binary: no interpreter to exec it

    return str(find_ruff_bin())


def format_python(folder: Path, scratch: Path, seconds: float | None = None) -> None:
    """Ruff (pinned, fixed settings: no config file or variable counts) formats `folder`.

    Its passes run one after the other in a shell of their own, in `tool_env`, as the client
    generator's post hooks do.  Code that does not parse is said first, by file and line.  Nothing
    outlives the call: ruff is stopped at its limit (`seconds`, from its start; default: `tool_seconds()`).
    """
    seconds = tool_seconds() if seconds is None else seconds
    check_syntax(folder)
    script = " && ".join(shlex.join(command) for command in ruff_passes(ruff_binary(), "."))
    process = subprocess.Popen(
        ["/bin/sh", "-c", script],
        cwd=folder,
        env=tool_env(scratch),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        process_group=0,
        **_TEXT,
    )
    try:
        output, _ = process.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        _stop_and_reap(process)
        raise ToolError(past_its_limit("ruff", seconds)) from None
    except BaseException:  # Ctrl-C, SIGTERM: ruff does not outlive the run
        _kill_group(process)
        process.wait()
        raise
    if process.returncode != 0:
        raise ToolError(tool_failure("ruff", process.returncode, output))
