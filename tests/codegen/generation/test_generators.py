"""The generators run hermetically; their, ruff's and syntax failures are one or two lines: tool, message, where."""

from __future__ import annotations

import json
import os
import queue
import re
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from codegen.config import load_source
from codegen.generation import generators
from codegen.generation.generators import (
    _TEXT,
    CLIENT,
    CLIENT_CONFIG,
    ENVD_HTTP,
    LAUNCHER,
    PROTOC,
    PYTHON,
    WIRE,
    Generators,
    _Running,
    client_config,
    format_python,
    generate,
    join_helper,
    private_scratch,
    ruff_binary,
    ruff_passes,
    start_helper,
    tool_env,
    tool_failure,
    using_toolchain,
    write_filtered_spec,
)
from codegen.openapi.document import read_spec
from codegen.openapi.operation_map import load_operation_map
from codegen.openapi.sdk_filter import filter_spec
from tests.codegen.conftest import ROOT, Result, unchanged
from toolkit.errors import ToolError
from toolkit.paths import Project

MARKER = "PLANTED"


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Path]:
    with private_scratch(tmp_path / "codegen-cache" / "scratch") as folder:
        yield folder


CLIENT_WARNING = """Generating /tmp/x/out
Warning(s) encountered while generating. Client was generated, but some pieces may be missing
WARNING parsing GET /sandboxes within sandboxes.

Cannot parse parameter <openapi_python_client.schema.untrusted_string.UntrustedString object at 0x7f4c> (bad)

{
  "name": "x"
}

If you believe this was a mistake or this tool is missing a feature you need, please open an issue at https://x
"""


def test_a_client_warning_names_the_operation_and_never_an_object_repr() -> None:
    problem = tool_failure("openapi-python-client", 1, CLIENT_WARNING)
    assert problem.where == "spec/openapi.yml (GET /sandboxes)"
    assert problem.message == "openapi-python-client failed (exit 1): Cannot parse parameter (bad)"


def test_a_traceback_is_its_last_line() -> None:
    output = "Traceback (most recent call last):\n  File \"m.py\", line 3, in f\n    g()\nKeyError: 'items'\n"
    assert tool_failure("datamodel-code-generator", 1, output).message.endswith("KeyError: 'items'")


@pytest.mark.parametrize("output", ["", "\n  \n", "{\n}\n"])
def test_silence_is_said_as_such(output: str) -> None:
    assert tool_failure("ruff", 2, output).message == "ruff failed (exit 2): exited 2 without saying why"


def test_generated_code_that_does_not_parse_is_named_with_its_line(tmp_path: Path) -> None:
    module = tmp_path / "packages" / "m.py"
    module.parent.mkdir()
    module.write_text('x = 1\ny = "a"""\nimport os"\n')
    with pytest.raises(ToolError) as caught, private_scratch(tmp_path / "scratch") as scratch:
        format_python(tmp_path, scratch)
    (problem,) = caught.value.problems
    assert problem.where == "packages/m.py:3"
    assert problem.message.startswith("generated code does not parse: ")
    assert len(problem.render().splitlines()) == 2  # the problem, then the remedy


def test_ruff_formats_what_parses(tmp_path: Path, scratch: Path) -> None:
    (tmp_path / "m.py").write_text("x=[1,\n2]\n")
    format_python(tmp_path, scratch)
    assert (tmp_path / "m.py").read_text() == "x = [1, 2]\n"


@pytest.mark.parametrize("ignored", ["*.py", "dist/"])
def test_no_ignore_file_above_and_no_folder_name_leaves_a_file_unformatted(
    tmp_path: Path, scratch: Path, ignored: str
) -> None:
    """--isolated skips config files, not ignore files; and ruff skips `dist` and the like by default."""
    (tmp_path / ".ignore").write_text(ignored + "\n")  # above the folder, as above a cache folder
    out = tmp_path / "out"
    for module in (out / "m.py", out / "dist" / "m.py"):  # a spec's tag can name a folder `dist`
        module.parent.mkdir(parents=True, exist_ok=True)
        module.write_text("import os\nx=[1,\n2]\n")
    format_python(out, scratch)
    assert (out / "m.py").read_text() == (out / "dist" / "m.py").read_text() == "x = [1, 2]\n"


# --- the client generator formats its own output: the same ruff passes, as its post hooks ---------


def _filtered_spec(scratch: Path) -> Path:
    project = Project(ROOT)
    document = read_spec(project.spec.read_bytes())
    operations = load_operation_map(project.operations)
    return write_filtered_spec(
        filter_spec(document.data, tags=load_source(project).sdk_tags, operations=operations), scratch
    )


def test_the_client_config_as_run_adds_the_ruff_passes_as_post_hooks(scratch: Path) -> None:
    committed = ROOT / "codegen" / CLIENT_CONFIG
    assert "post_hooks" not in yaml.safe_load(committed.read_text()), "the pipeline adds them: two would clash"
    run = client_config(committed, scratch)
    settings = yaml.safe_load(run.read_text())
    assert settings == {**yaml.safe_load(committed.read_text()), "post_hooks": settings["post_hooks"]}
    assert [shlex.split(hook) for hook in settings["post_hooks"]] == ruff_passes("ruff", ".")
    # `ruff` by name is the pinned binary: the first entry of the tools' PATH holds it and nothing else.
    first = Path(tool_env(scratch)["PATH"].split(os.pathsep)[0])
    assert [p.name for p in first.iterdir()] == ["ruff"]
    assert (first / "ruff").resolve() == Path(ruff_binary()).resolve()


def test_the_client_comes_out_as_the_one_ruff_pass_leaves_it(scratch: Path) -> None:
    generators = Generators(scratch)
    try:
        client, _ = generate(_filtered_spec(scratch), generators, None, ROOT / "codegen" / CLIENT_CONFIG)
    finally:
        generators.close()
    modules = sorted(client.rglob("*.py"))
    assert len(modules) > 10
    before = {path: path.read_bytes() for path in modules}
    format_python(client, scratch)  # codegen's own pass over the wire models and overlays
    assert {path: path.read_bytes() for path in modules} == before


@pytest.mark.parametrize(
    "code",
    [
        "def broken(:",  # the post hooks' ruff fails on it
        "type X = int",  # ruff, targeting 3.10, lets it through; this Python cannot parse it
    ],
)
def test_a_client_template_that_writes_code_that_does_not_parse_is_named_with_its_line(
    tmp_path: Path, scratch: Path, code: str
) -> None:
    """The message is the file and line, whatever ruff made of it."""
    import openapi_python_client

    templates = tmp_path / "templates"
    shutil.copytree(ROOT / "templates" / "client", templates)
    shipped = Path(openapi_python_client.__file__).parent / "templates" / "types.py.jinja"
    (templates / "types.py.jinja").write_text(shipped.read_text() + code + "\n")
    generators = Generators(scratch)
    try:
        with pytest.raises(ToolError) as caught:
            generate(_filtered_spec(scratch), generators, templates, ROOT / "codegen" / CLIENT_CONFIG)
    finally:
        generators.close()
    (problem,) = caught.value.problems
    assert re.fullmatch(r"types\.py:\d+", problem.where or ""), problem.where
    assert problem.message.startswith("generated code does not parse: ")


# --- hermetic: only this repository configures the generators ------------------------------------


def test_the_scratch_folder_is_private_and_removed(tmp_path: Path) -> None:
    parent = tmp_path / "cache" / "scratch"
    parent.mkdir(parents=True, mode=0o755)
    parent.chmod(0o777)  # however it was left, codegen's folder is made private again
    with private_scratch(parent) as folder:
        assert folder.parent == parent
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        assert stat.S_IMODE(parent.stat().st_mode) == 0o700
        assert folder.stat().st_uid == os.getuid()
    assert not folder.exists()


def test_a_scratch_parent_that_is_a_symlink_is_refused(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "scratch").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ToolError) as caught, private_scratch(tmp_path / "scratch"):
        pass
    (problem,) = caught.value.problems
    assert "is not a folder of this user's" in problem.message and "E2B_CODEGEN_CACHE" in problem.message
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_the_tools_see_no_variable_of_the_callers(scratch: Path) -> None:
    env = tool_env(scratch)
    assert set(env) == {"PATH", "HOME", "TMPDIR", "LC_ALL", "NO_COLOR"}
    assert env["HOME"].startswith(str(scratch)) and env["TMPDIR"].startswith(str(scratch))
    assert env["PATH"] == os.pathsep.join([str(scratch / "bin"), os.defpath])


def _plant(folder: Path) -> None:
    """What another user of a shared machine could leave above codegen's scratch folder."""
    templates = folder / "evil-templates" / "pydantic_v2"
    templates.mkdir(parents=True)
    (templates / "BaseModel.jinja2").write_text(f"# {MARKER}: arbitrary code\nclass {{{{ class_name }}}}: ...\n")
    (folder / "pyproject.toml").write_text(
        "[tool.datamodel-codegen]\n"
        f'custom-template-dir = "{templates.parent}"\n'
        "[tool.black]\nline-length = 20\n"
        "[tool.isort]\nforce_single_line = true\n"
    )
    site = folder / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import sys\n"
        "if any('_generator' in arg or 'openapi_python_client' in arg for arg in sys.orig_argv):\n"
        f"    open({str(folder / MARKER)!r}, 'w').close()\n"
    )


def test_a_pyproject_above_the_scratch_folder_and_the_callers_variables_change_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 20, item 4: config above the scratch folder, PYTHONPATH and RUFF_* never reach the output."""
    shared = tmp_path / "shared"
    shared.mkdir()
    _plant(shared)
    monkeypatch.setenv("PYTHONPATH", str(shared / "site"))
    monkeypatch.setenv("RUFF_LINE_LENGTH", "20")
    monkeypatch.setenv("TMPDIR", str(shared))
    project = Project(ROOT)
    document = read_spec(project.spec.read_bytes())
    filtered = filter_spec(
        document.data, tags=load_source(project).sdk_tags, operations=load_operation_map(project.operations)
    )
    with private_scratch(shared / "cache" / "scratch") as scratch:
        generators = Generators(scratch)
        generators.start()  # as codegen does: before the spec is written
        spec = write_filtered_spec(filtered, scratch)
        try:
            _, wire = generate(spec, generators, None, ROOT / "codegen" / CLIENT_CONFIG)
        finally:
            generators.close()
        text = wire.read_text()
        format_python(wire.parent, scratch)
        formatted = wire.read_text()
    assert MARKER not in text and "class NewSandbox(BaseModel):" in text
    assert not (shared / MARKER).exists()
    committed = (ROOT / "packages/local-api/e2b_local_api/wire/models.py").read_text()
    assert committed.endswith(formatted), "the planted black, isort or ruff settings changed the formatting"
    assert sys.flags.isolated == 0  # the test itself ran with the variables: only the tools were isolated


def test_generators_started_but_never_given_arguments_are_stopped(scratch: Path) -> None:
    generators = Generators(scratch)
    generators.start()
    processes = list(generators._started.values())
    # protoc and envd's client too: each ends when there is nothing of envd's to generate
    assert list(generators._started) == [CLIENT, WIRE, PROTOC, ENVD_HTTP]
    generators.close()
    assert all(process.returncode is not None for process in processes)


def test_a_generator_that_fails_says_so_and_the_other_is_stopped(scratch: Path) -> None:
    generators = Generators(scratch)
    generators.start()
    try:
        with pytest.raises(ToolError) as caught:
            generate(scratch / "absent.json", generators, None, ROOT / "codegen" / CLIENT_CONFIG)
    finally:
        generators.close()
    assert caught.value.problems[0].message.startswith("openapi-python-client failed (exit ")


# --- which generator finished first: codegen's own work takes the core it frees -----------------


def test_first_done_names_the_generator_that_finished_while_the_other_still_runs(scratch: Path) -> None:
    """The client's job reads a FIFO nobody has written yet: it cannot end before the other."""
    gate = scratch / "gate"
    os.mkfifo(gate)
    (scratch / "small.json").write_text("{}")
    generators = Generators(scratch)
    try:
        generators.start_jobs(
            [
                ("openapi-python-client", ["json.tool", str(gate)]),
                ("datamodel-code-generator", ["json.tool", "small.json"]),
            ]
        )
        assert generators.first_finished() == "datamodel-code-generator"
        generators.wait("datamodel-code-generator")
        with open(gate, "w") as fifo:  # a FIFO: opening it for writing lets the reader on
            fifo.write("[1]")
        generators.wait("openapi-python-client")
        assert generators.first_finished() == "datamodel-code-generator"  # asked again: the same answer
    finally:
        generators.close()


def test_close_stops_a_generator_that_is_still_running(scratch: Path) -> None:
    gate = scratch / "gate"
    os.mkfifo(gate)
    generators = Generators(scratch)
    generators.start_jobs([("openapi-python-client", ["json.tool", str(gate)])])
    (running,) = generators._running.values()
    generators.close()  # would hang if it waited for the FIFO
    assert running.process.returncode is not None and not running.waiter.is_alive()


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads a thread's signal mask from /proc")
def test_the_thread_that_waits_for_a_generator_leaves_ctrl_c_to_the_main_thread(scratch: Path) -> None:
    """Taken by that thread, Ctrl-C would wait for the generator to end before anything noticed it."""
    gate = scratch / "gate"
    os.mkfifo(gate)
    generators = Generators(scratch)
    try:
        generators.start_jobs([("openapi-python-client", ["json.tool", str(gate)])])
        waiter = generators._running["openapi-python-client"].waiter
        assert waiter.native_id is not None
        status = Path(f"/proc/self/task/{waiter.native_id}/status")
        deadline = time.monotonic() + 10  # the thread blocks the signals first thing; it is waiting by then
        while not _blocked(status, signal.SIGINT) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _blocked(status, signal.SIGINT) and _blocked(status, signal.SIGTERM)
        assert not _blocked(Path(f"/proc/self/task/{threading.get_native_id()}/status"), signal.SIGINT)
    finally:
        generators.close()


def test_a_helper_thread_has_the_signals_blocked_from_its_first_instruction() -> None:
    """Blocked by the thread itself, there was a moment when it could take one: the main thread never saw it."""
    masks: list[set[int | signal.Signals]] = []
    helper = threading.Thread(target=lambda: masks.append(signal.pthread_sigmask(signal.SIG_BLOCK, [])))
    before = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    start_helper(helper)
    assert join_helper(helper, timeout=60)
    assert {signal.SIGINT, signal.SIGTERM} <= masks[0]
    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == before  # the main thread's own, as it was


def test_join_helper_gives_up_at_its_timeout_on_a_thread_that_never_ends() -> None:
    never = threading.Event()
    helper = threading.Thread(target=never.wait, daemon=True)
    start_helper(helper)
    try:
        assert join_helper(helper, timeout=0.1) is False and helper.is_alive()
    finally:
        never.set()
    assert join_helper(helper)


def _blocked(status: Path, signum: int) -> bool:
    mask = re.search(r"^SigBlk:\s*([0-9a-f]+)$", status.read_text(), re.MULTILINE)
    assert mask is not None
    return bool(int(mask[1], 16) & (1 << (signum - 1)))


# --- no verdict is never success --------------------------------------------------------------------


def _running(command: str, **decoding: Any) -> _Running:
    process = subprocess.Popen(
        [sys.executable, "-c", command], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **decoding
    )
    running = _Running("openapi-python-client", process, queue.SimpleQueue())
    running.waiter.start()
    running.waiter.join()
    return running


def test_a_failure_whose_output_is_not_utf8_is_a_failure() -> None:
    running = _running("import sys; sys.stdout.buffer.write(b'Generating /tmp/caf\\xe9\\n'); sys.exit(3)", **_TEXT)
    assert running.problem is not None and running.problem.message.startswith("openapi-python-client failed (exit 3)")


def test_output_that_cannot_be_read_is_a_failure_not_a_success() -> None:
    """The thread must not die leaving no verdict, which the run would take for success."""
    running = _running("import sys; sys.stdout.buffer.write(b'\\xff')", encoding="utf-8", errors="strict")
    assert running.process.returncode is not None  # reaped, not left behind
    assert running.problem is not None
    assert running.problem.message.startswith("openapi-python-client: its output could not be read: UnicodeDecodeError")


# --- the launcher: a generator's verdict and output, without its interpreter's teardown ---------------


def _launched(scratch: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """The launcher, importing nothing ahead, given `arguments` (`python -m` form) at once."""
    return subprocess.run(
        [*PYTHON, str(LAUNCHER)],
        input=json.dumps(arguments) + "\n",
        cwd=scratch,
        env=tool_env(scratch),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_launcher_flushes_what_the_generator_wrote_and_keeps_its_exit_status(scratch: Path) -> None:
    (scratch / "list.json").write_text('[1, {"a": 2}]')
    done = _launched(scratch, "json.tool", "--compact", "list.json")  # stdout a pipe: block-buffered
    assert (done.returncode, done.stdout, done.stderr) == (0, '[1,{"a":2}]\n', "")


@pytest.mark.parametrize(
    ("arguments", "status", "said"),
    [
        (("json.tool", "--no-such-option"), 2, "unrecognized arguments: --no-such-option"),  # SystemExit(2)
        (("json.tool", "broken.json"), 1, "Expecting value: line 1 column 1"),  # SystemExit(an exception)
        (("codegen_no_such_generator",), 1, "No module named codegen_no_such_generator"),  # a traceback
    ],
)
def test_the_launcher_keeps_a_failure_a_failure(
    scratch: Path, arguments: tuple[str, ...], status: int, said: str
) -> None:
    (scratch / "broken.json").write_text("")
    done = _launched(scratch, *arguments)
    assert done.returncode == status, done.stderr
    assert said in done.stderr


def test_a_generator_that_closes_its_own_stdout_still_succeeds(scratch: Path) -> None:
    (scratch / "in.json").write_text("{}")
    done = _launched(scratch, "json.tool", "in.json", "out.json")  # writes a file and closes it: nothing to flush
    assert done.returncode == 0, done.stderr
    assert (scratch / "out.json").read_text() == "{}\n"


# --- ruff ---------------------------------------------------------------------------------------------


def test_ruff_failing_is_said_in_one_line(tmp_path: Path, scratch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    failing = tmp_path / "failing-ruff"
    failing.write_text("#!/bin/sh\necho 'error: planted failure'\nexit 3\n")
    failing.chmod(0o755)
    monkeypatch.setattr(generators, "ruff_binary", lambda: str(failing))
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "m.py").write_text("x = 1\n")
    with pytest.raises(ToolError) as caught:
        format_python(tmp_path / "out", scratch)
    assert caught.value.problems[0].message == "ruff failed (exit 3): planted failure"


def test_a_signal_a_finalizer_swallowed_ends_an_unbounded_wait_and_not_a_bounded_one() -> None:
    """The finalizer may have left the import lock held, and the helper waits on it forever: the wait must end."""
    from codegen.generation.generators import join_helper, start_helper
    from toolkit.signals import LostSignal, note_lost_signal, take_lost_signals

    release = threading.Event()
    stuck = threading.Thread(target=release.wait, daemon=True)
    start_helper(stuck)
    try:
        note_lost_signal(signal.SIGTERM)
        assert join_helper(stuck, timeout=0.01) is False  # a clean-up's wait: it goes on
        with pytest.raises(LostSignal) as raised:
            join_helper(stuck)
        assert raised.value.signum == signal.SIGTERM and take_lost_signals() == []
    finally:
        take_lost_signals()
        release.set()


# --- each tool's wall-clock limit (issue 40, finding 4) ---------------------------------------------

# A stand-in for a generator's interpreter: it starts a process of its own (in its group, as a generator's
# post hooks are), says its id, then takes its arguments: the wire models' job writes an empty module and
# ends, any other sleeps for an hour.
STAND_IN = """
import json, os, subprocess, sys, time
tool = sys.argv[1]
if "--escape" in sys.argv:  # a process of its own session, that keeps the tool's output open
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"], start_new_session=True)
else:
    quiet = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"], **quiet)
with open(tool + ".tmp", "w") as said:
    said.write(str(child.pid))
os.replace(tool + ".tmp", tool + ".child")
args = json.loads(sys.stdin.readline() or "[]")
if "--output" in args:
    open(args[args.index("--output") + 1], "w").close()
    sys.exit(0)
time.sleep(3600)
"""


def stand_in(folder: Path, *flags: str) -> Callable[[str], list[str]]:
    script = folder / "stand_in.py"
    script.write_text(STAND_IN)
    return lambda tool: [*PYTHON, str(script), tool, *flags]


def _child_of(scratch: Path, tool: str) -> int:
    said = scratch / f"{tool}.child"
    deadline = time.monotonic() + 60
    while not said.exists():
        assert time.monotonic() < deadline, f"the stand-in for {tool} never started its process"
        time.sleep(0.02)
    return int(said.read_text())


def _gone(pid: int) -> bool:
    """Whether `pid` has ended (a zombie waiting for its reaper has)."""
    deadline = time.monotonic() + 10  # the kill is at once; the kernel's bookkeeping, a moment
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.02)
    return False


LIMIT_SAID = (
    "ran past its 1 s limit and was stopped, with every process it started (E2B_CODEGEN_TOOL_SECONDS sets the limit)"
)


def test_a_generator_past_its_limit_is_stopped_with_what_it_started_in_one_line(scratch: Path, tmp_path: Path) -> None:
    """The limit counts from the arguments, handed once the stand-in's own process runs: load only makes it later."""
    generators = Generators(scratch, seconds=1, command=stand_in(tmp_path))
    try:
        generators.start()
        child = _child_of(scratch, CLIENT)
        started = time.monotonic()
        generators.start_jobs([(CLIENT, ["anything"])])
        with pytest.raises(ToolError) as caught:
            generators.wait(CLIENT)
        assert time.monotonic() - started < 60
        assert [p.render() for p in caught.value.problems] == [f"{CLIENT} {LIMIT_SAID}"]
        assert _gone(child) and generators._running[CLIENT].process.returncode is not None  # before close()
    finally:
        generators.close()


def test_a_generator_past_its_limit_ends_the_wait_even_when_a_process_that_left_its_group_holds_its_output(
    scratch: Path, tmp_path: Path
) -> None:
    """That process is out of reach (its own session): the run stops waiting for the output it holds."""
    generators = Generators(scratch, seconds=1, command=stand_in(tmp_path, "--escape"))
    try:
        generators.start()
        # Every interpreter starts at once, each with a process of its own session: all are the test's to end.
        escaped = [_child_of(scratch, tool) for tool in (CLIENT, WIRE, PROTOC, ENVD_HTTP)]
        started = time.monotonic()
        generators.start_jobs([(CLIENT, ["anything"])])
        with pytest.raises(ToolError) as caught:
            generators.wait(CLIENT)
        assert time.monotonic() - started < 60
        assert [p.render() for p in caught.value.problems] == [f"{CLIENT} {LIMIT_SAID}"]
    finally:
        generators.close()  # the other stand-in, never handed its arguments: not waited for either
        for pid in escaped:  # the test's own processes, out of the tools' groups
            os.kill(pid, signal.SIGKILL)


def test_ruff_past_its_limit_is_stopped_in_one_line(scratch: Path, tmp_path: Path) -> None:
    """A FIFO named like a stub file: ruff waits on it for a writer that never comes."""
    folder = tmp_path / "formatted"
    folder.mkdir()
    os.mkfifo(folder / "waits.pyi")
    started = time.monotonic()
    with pytest.raises(ToolError) as caught:
        format_python(folder, scratch, seconds=1)
    assert time.monotonic() - started < 60
    assert [p.render() for p in caught.value.problems] == [f"ruff {LIMIT_SAID}"]


@pytest.mark.parametrize("said", ["soon", "0", "-5", "inf", "nan"])
def test_a_limit_that_is_not_a_time_is_one_line(scratch: Path, monkeypatch: pytest.MonkeyPatch, said: str) -> None:
    monkeypatch.setenv("E2B_CODEGEN_TOOL_SECONDS", said)
    with pytest.raises(ToolError) as caught:
        Generators(scratch)
    assert [p.render() for p in caught.value.problems] == [
        f"E2B_CODEGEN_TOOL_SECONDS must be a number of seconds above 0, not {said!r}: unset it for 120"
    ]
    monkeypatch.setenv("E2B_CODEGEN_TOOL_SECONDS", "2.5")
    assert Generators(scratch).seconds == 2.5
    monkeypatch.delenv("E2B_CODEGEN_TOOL_SECONDS")
    assert Generators(scratch).seconds == 120


@pytest.mark.parametrize("verb", [("generate",), ("check", "--no-cache")])
def test_generate_and_check_end_with_exit_2_when_a_generator_passes_its_limit(
    project: Path, run: Callable[..., Result], tmp_path: Path, verb: tuple[str, ...]
) -> None:
    """The client generator's stand-in never ends: the run says so in one line, writes nothing, and leaves nothing."""
    command = stand_in(tmp_path)
    made: list[Generators] = []

    def toolchain(scratch: Path) -> Generators:
        made.append(Generators(scratch, seconds=1, command=command))
        return made[-1]

    started = time.monotonic()
    with unchanged(project), using_toolchain(toolchain):
        result = run(project, *verb)
    assert time.monotonic() - started < 60
    assert result.code == 2, result.text
    errors = [line for line in result.err.splitlines() if line.startswith("codegen: error: ")]
    # Every tool is the stand-in: protoc and envd's client, beside the generators, are past their limit too,
    # said after the client, in the order the tools are handed their jobs.
    assert errors == [
        f"codegen: error: {CLIENT} {LIMIT_SAID}",
        f"codegen: error: {PROTOC} {LIMIT_SAID}",
        f"codegen: error: {ENVD_HTTP} {LIMIT_SAID}",
    ], result.text
    [generators] = made
    assert not generators.scratch.exists()  # the run's scratch folder, with the stand-ins' files, removed
