"""Shared fixtures for the codegen tests: a rebuilt upstream, a pristine project copy, runners.

Nothing here touches the project tree itself: the project is copied once per test run
(tracked plus untracked-but-not-ignored files), committed in its own git
repository, and copied again per test.  The upstream is rebuilt once per
run with `codegen.upstream.history` and copied per test; tests add real
commits to their copy.  "Once per run" holds across pytest-xdist's workers
(tests/once_per_run.py): one builds, the others reuse the folder.

A full generation takes seconds, so runs share them: they run the production pipeline with a
toolchain whose tools (the generators, ruff) answer from what they produced before for exactly the
same arguments and files (tests/codegen/memo_toolchain.py), in each worker and in a folder the
workers share.  In process by `using_toolchain`; in the codegen processes the tests start, by
`codegen_module` (tools="memo": tests/codegen/memo_codegen.py, codegen's own entry point).  Tests of
the tools' own processes (their failures, limits, signals while they run) pass tools="real".
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest
from git import Actor, Repo

import codegen.pipeline
from codegen.cli import main as cli_main
from codegen.commands.handwritten import PACKAGES
from codegen.generation.generators import Toolchain, using_toolchain
from codegen.messages import Messages
from codegen.upstream.history import build_runtime_repo
from tests.child_output import stderr_until
from tests.codegen.memo_readings import READINGS, memoized_readings
from tests.codegen.memo_toolchain import MemoToolchain
from tests.once_per_run import build_once, copy_tree
from tests.signal_dispositions import default_dispositions
from toolkit.paths import GENERATED_ROOTS

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = ROOT / ".venv" / "bin"
SPEC_PATH = "spec/openapi.yml"
PIN = (ROOT / "spec" / "runtime-ref").read_text().strip()
PERSON = Actor("Test Runner", "tests@runtime.example")
_GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_TERMINAL_PROMPT": "0"}
CODEGEN_ENV = ("E2B_RUNTIME_REPO", "E2B_RUNTIME_REF", "E2B_CODEGEN_CACHE")


# --- spec edits (callbacks on the YAML text) --------------------------------


def replace_once(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, f"expected exactly one {old!r} in the spec"
    return text.replace(old, new)


def add_optional_property(text: str) -> str:
    """NewSandbox gains an optional `note` (minor)."""
    block = text.index("    NewSandbox:\n")
    head, tail = text[:block], text[block:]
    anchor = "        allow_internet_access:\n          type: boolean\n"
    anchor += "          description: False denies all egress, as `denyOut` of `0.0.0.0/0` would.\n"
    assert anchor in tail, f"expected {anchor!r} in NewSandbox"
    return head + tail.replace(
        anchor,
        anchor + "        note:\n          type: string\n          description: A free-form note.\n",
        1,
    )


def add_operation(text: str) -> str:
    """A new operation refreshSandbox (minor)."""
    anchor = "  /sandboxes/{sandboxID}/metrics:\n"
    block = (
        "  /sandboxes/{sandboxID}/refresh:\n"
        "    parameters:\n"
        '      - $ref: "#/components/parameters/sandboxID"\n'
        "    post:\n"
        "      operationId: refreshSandbox\n"
        "      summary: Refresh a sandbox\n"
        "      tags: [sandboxes]\n"
        "      security:\n"
        "        - ApiKeyAuth: []\n"
        "      responses:\n"
        '        "204":\n'
        "          description: Refreshed.\n"
        '        "401":\n'
        '          $ref: "#/components/responses/Unauthorized"\n'
        "\n"
    )
    return replace_once(text, anchor, block + anchor)


def change_description(text: str) -> str:
    """Description text only (patch)."""
    return replace_once(
        text,
        "Create and start a sandbox from a template or a snapshot.",
        "Create a sandbox from a template or a snapshot and start it.",
    )


def remove_operation(text: str) -> str:
    """The refresh operation (added by add_operation, mapped by no name) disappears (major)."""
    start = text.index("  /sandboxes/{sandboxID}/refresh:\n")
    end = text.index("  /sandboxes/{sandboxID}/metrics:\n")
    return text[:start] + text[end:]


def remove_mapped_operation(text: str) -> str:
    """setSandboxTimeout, which spec/operations.yml maps, disappears: codegen refuses."""
    start = text.index("  /sandboxes/{sandboxID}/timeout:\n")
    end = text.index("  /sandboxes/{sandboxID}/connect:\n")
    return text[:start] + text[end:]


def rename_upstream_operation_id(text: str) -> str:
    """The upstream renames pauseSandbox's operationId: not an SDK change."""
    return replace_once(text, "      operationId: pauseSandbox\n", "      operationId: sandboxPause\n")


def make_property_required(text: str) -> str:
    """NewSandbox.timeout becomes required (major: request side)."""
    block = text.index("    NewSandbox:\n")
    head, tail = text[:block], text[block:]
    return head + tail.replace("        - templateID\n", "        - templateID\n        - timeout\n", 1)


def narrow_enum(text: str) -> str:
    """SandboxResumeMode loses `reboot` (major: a request enum value removed)."""
    return replace_once(text, "        - memory\n        - reboot\n", "        - memory\n")


def drop_force(text: str) -> str:
    """SandboxPauseRequest loses `force`: the pause contract breaks."""
    start = text.index("        force:\n          type: boolean\n          default: false\n")
    end = text.index("    SandboxPauseResult:\n")
    return text[:start] + "\n" + text[end:]


# --- the upstream -----------------------------------------------------------


class Upstream:
    """A real git repository standing in for the runtime repository (branch main)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.repo = Repo(path)
        self.repo.git.update_environment(**_GIT_ENV)

    @property
    def url(self) -> str:
        return str(self.path)

    def head(self, ref: str = "main") -> str:
        return self.repo.commit(ref).hexsha

    def spec_at(self, ref: str = "main") -> str:
        data: bytes = (self.repo.commit(ref).tree / SPEC_PATH).data_stream.read()
        return data.decode()

    def commit_bytes(self, data: bytes, message: str, *, path: str = SPEC_PATH) -> str:
        """Commit `data` at `path` on the checked-out branch (main unless moved)."""
        target = self.path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        self.repo.index.add([path])
        return self.repo.index.commit(message, author=PERSON, committer=PERSON, skip_hooks=True).hexsha

    def commit_edit(self, edit: Callable[[str], str], message: str | None = None) -> str:
        """A commit on main whose spec is `edit(spec text at main)`."""
        text = edit(self.spec_at("main"))
        return self.commit_bytes(text.encode(), message or getattr(edit, "__doc__", None) or "edit")

    def commit_on_ref(self, edit: Callable[[str], str], ref: str) -> str:
        """A commit off main stored only under `ref` (e.g. refs/pull/1/head); main is unchanged."""
        self.repo.git.checkout("-q", "-b", "side")
        try:
            sha = self.commit_edit(edit, "side change")
        finally:
            self.repo.git.checkout("-q", "main")
            self.repo.git.branch("-D", "side")
        self.repo.git.update_ref(ref, sha)
        return sha


@pytest.fixture(scope="session")
def pristine_upstream(tmp_path_factory: pytest.TempPathFactory) -> Path:
    def build(folder: Path) -> None:
        built = build_runtime_repo(folder / "runtime")
        assert built[-1][1] == PIN, "the rebuilt upstream no longer ends at spec/runtime-ref"

    return build_once(tmp_path_factory, "upstream", build) / "runtime"


@pytest.fixture(scope="session")
def v100(pristine_upstream: Path) -> str:
    return Repo(pristine_upstream).commit("v1.0.0").hexsha


def copy_upstream(pristine: Path, dest: Path) -> Upstream:
    return Upstream(copy_tree(pristine, dest))


@pytest.fixture
def upstream(pristine_upstream: Path, tmp_path: Path) -> Upstream:
    """A per-test copy of the rebuilt upstream, free to gain commits."""
    return copy_upstream(pristine_upstream, tmp_path / "runtime")


# --- memoized generation ---------------------------------------------------------


@pytest.fixture(scope="session")
def generation_memo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where every worker of this run finds what the tools produced for another (tests/codegen/memo_toolchain.py)."""
    return build_once(tmp_path_factory, "generated", lambda folder: None)


# The memo's folder while a test runs (`_memoized_generation`): where `codegen_module` points the processes.
_test_memo: Path | None = None


@pytest.fixture(autouse=True)
def _memoized_generation(generation_memo: Path) -> Iterator[None]:
    """In-process runs use the memo's toolchain and readings; a codegen process, whichever `codegen_module` says."""
    global _test_memo
    _test_memo = generation_memo
    try:
        with (
            using_toolchain(functools.partial(MemoToolchain, shared=generation_memo)),
            memoized_readings(generation_memo / READINGS),
        ):
            yield
    finally:
        _test_memo = None


@pytest.fixture
def no_generation(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Replace the generators with nothing, for tests that only look at reports or refusals."""
    calls: list[str] = []

    def fake_generate_tree(
        generators: Toolchain,
        inputs: object,
        source: Any,
        filtered: dict[str, Any],
        messages: Messages,
        *,
        protos: Mapping[str, bytes] | None = None,
        envd_http: dict[str, Any] | None = None,
    ) -> dict[str, bytes]:
        calls.append(source.commit)
        return {}

    monkeypatch.setattr(codegen.pipeline, "generate_tree", fake_generate_tree)
    return calls


# --- running codegen ------------------------------------------------------------


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err


def run_in_process(root: Path, *args: str, env: dict[str, str | None]) -> Result:
    """`python -m codegen --root ROOT ARGS` in this interpreter, with `env` applied (None unsets)."""
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        for key in CODEGEN_ENV:
            mp.delenv(key, raising=False)
        for key, value in env.items():
            if value is None:
                mp.delenv(key, raising=False)
            else:
                mp.setenv(key, value)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli_main(["--root", str(root), *args])
            except SystemExit as exc:  # argparse
                code = exc.code if isinstance(exc.code, int) else 2
    return Result(code, out.getvalue(), err.getvalue())


def subprocess_env(env: dict[str, str | None]) -> dict[str, str]:
    full = {k: v for k, v in os.environ.items() if k not in CODEGEN_ENV}
    full["PATH"] = f"{VENV_BIN}{os.pathsep}{full.get('PATH', '')}"
    full.update({k: v for k, v in env.items() if v is not None})
    return full


# The tools of a codegen process a test starts.  "memo": the toolchain of the in-process runs, which answers
# a tool's job only from a success on exactly the same arguments and files (a failure runs again, for real),
# so what codegen itself does, says and exits with is the same; for tests of codegen's own logic.
# "real": `python -m codegen` as it is, for tests of the tools' processes: generators preloaded and
# launched, their failures, their time limits, signals while they run, a real generation end to end.
Tools = Literal["memo", "real"]


def codegen_module(tools: Tools = "memo", *, memo: Path | None = None) -> list[str]:
    """What follows the interpreter and its options to run codegen: `-m codegen`, or its memo form.

    `memo`: the memo's folder (the `generation_memo` fixture) where `_memoized_generation` is not in use.
    """
    if tools == "real":
        return ["-m", "codegen"]
    folder = memo if memo is not None else _test_memo
    assert folder is not None, "codegen_module: no memo folder here; pass the generation_memo fixture"
    return ["-m", "tests.codegen.memo_codegen", str(folder), "--"]


def codegen_command(root: Path, *args: str, tools: Tools = "memo") -> list[str]:
    """`python -m codegen --root ROOT ARGS` (`codegen_module` says which tools it uses)."""
    return [sys.executable, *codegen_module(tools), "--root", str(root), *args]


def release_checker(tools: Tools = "memo", *, memo: Path | None = None) -> tuple[str, ...]:
    """release/make_release.py's CHECKER (how a release runs the generated-files check), with `tools`."""
    return (sys.executable, "-X", "utf8", *codegen_module(tools, memo=memo))


def release_command(root: Path, *args: str, tools: Tools = "memo") -> list[str]:
    """`python -m release --root ROOT ARGS`, its generated-files check run with `tools` (`release_checker`)."""
    if tools == "real":
        return [sys.executable, "-m", "release", "--root", str(root), *args]
    script = (
        "import runpy\nimport release.make_release\n"
        f"release.make_release.CHECKER = {release_checker(tools)!r}\n"
        "runpy.run_module('release', run_name='__main__', alter_sys=True)\n"
    )
    return [sys.executable, "-c", script, "--root", str(root), *args]


def start_subprocess(
    root: Path, *args: str, env: dict[str, str | None], tools: Tools = "memo"
) -> subprocess.Popen[str]:
    """`python -m codegen ARGS` running in the background, its output piped."""
    return subprocess.Popen(
        codegen_command(root, *args, tools=tools),
        cwd=ROOT,
        env=subprocess_env(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def signal_when_generating(root: Path, verb: str, sig: int, *, env: dict[str, str | None]) -> Result:
    """Run `python -m codegen VERB` and send `sig` as the generators start; its result.

    The child starts with SIGINT and SIGTERM at their defaults, however the suite was started.
    """
    with default_dispositions():
        proc = start_subprocess(root, verb, env=env, tools="real")  # the signal lands while the generators run
    seen = stderr_until(proc, lambda lines: lines[-1].startswith("codegen: filter "))  # the generators start next
    if seen and seen[-1].startswith("codegen: filter "):
        proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    return Result(proc.returncode, out, "".join(seen) + err)


def run_subprocess(
    root: Path,
    *args: str,
    env: dict[str, str | None],
    timeout: float = 300,
    checkout: Path = ROOT,
    tools: Tools = "memo",
) -> Result:
    """`python -m codegen --root ROOT ARGS` run from `checkout` (whose codegen/ and templates/client/ run)."""
    done = subprocess.run(
        codegen_command(root, *args, tools=tools),
        cwd=checkout,
        env=subprocess_env(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return Result(done.returncode, done.stdout, done.stderr)


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


@pytest.fixture(scope="session")
def warm_mypy_cache(pristine_project: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """mypy's cache for the pristine project's packages, built once per run: each bump copies it."""

    def build(folder: Path) -> None:
        subprocess.run(
            [sys.executable, "-m", "mypy", "--config-file", "pyproject.toml", "--cache-dir", str(folder / "mypy"),
             "--output", "json", *PACKAGES],
            cwd=pristine_project, capture_output=True, check=False, timeout=600,
        )  # fmt: skip

    return build_once(tmp_path_factory, "bump-mypy-cache", build) / "mypy"


@pytest.fixture
def warm_cache(cache: Path, warm_mypy_cache: Path) -> Path:
    """`cache` with mypy's cache in it warm, for a test whose bump type-checks the hand-written packages.

    A bump's check runs mypy --strict on them: 9 s of CPU from an empty cache, under 1 s from this one,
    as from a maintainer's cache after a first bump.  Tests of the cache folder itself leave it out.
    """
    return with_warm_mypy(cache, warm_mypy_cache)


def with_warm_mypy(cache: Path, warm_mypy_cache: Path) -> Path:
    """The cache folder `cache` (made if missing) with a copy of `warm_mypy_cache` where bump's check keeps mypy's."""
    for folder in (cache, cache / "typecheck"):  # as codegen makes them (toolkit/cache_folder.py)
        folder.mkdir(mode=0o700, exist_ok=True)
    copy_tree(warm_mypy_cache, cache / "typecheck" / "mypy")
    return cache


@pytest.fixture
def env(upstream: Upstream, cache: Path) -> dict[str, str | None]:
    """The environment of a run against the per-test upstream."""
    return {"E2B_RUNTIME_REPO": upstream.url, "E2B_CODEGEN_CACHE": str(cache)}


@pytest.fixture
def run(env: dict[str, str | None]) -> Callable[..., Result]:
    """run(root, *args, **env_overrides): in process, against the per-test upstream."""

    def _run(root: Path, *args: str, **overrides: str | None) -> Result:
        return run_in_process(root, *args, env={**env, **overrides})

    return _run


# --- the project copy ---------------------------------------------------------


def project_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return sorted({p for p in listed.split("\0") if p and not p.startswith(".venv/")})


def git_repo(root: Path) -> Repo:
    repo = Repo(root)
    repo.git.update_environment(**_GIT_ENV)
    return repo


def commit_all(root: Path, message: str) -> None:
    repo = git_repo(root)
    repo.git.add("--all")
    repo.index.commit(message, author=PERSON, committer=PERSON, skip_hooks=True)


def git_status(root: Path) -> str:
    return str(git_repo(root).git.status("--porcelain", "--untracked-files=all"))


def tree_digest(root: Path) -> dict[str, str]:
    """sha256 of every file under root except .git: 'byte-identical' means equal digests.

    A link to a file counts as that file; a link to a folder is not entered.  By `os.walk` and strings:
    pathlib's `rglob` and `relative_to` took half of the time of this, which many tests run twice.
    """
    found: dict[str, str] = {}
    for folder, folders, files in os.walk(root):
        folders[:] = [name for name in folders if name != ".git"]
        prefix = os.path.relpath(folder, root).replace(os.sep, "/") + "/"
        for name in files:
            path = os.path.join(folder, name)
            if name != ".git" and os.path.isfile(path):
                with open(path, "rb") as handle:
                    found[prefix.removeprefix("./") + name] = hashlib.sha256(handle.read()).hexdigest()
    return dict(sorted(found.items()))


@pytest.fixture(scope="session")
def pristine_project(tmp_path_factory: pytest.TempPathFactory, pristine_upstream: Path, generation_memo: Path) -> Path:
    """The project as it is in this checkout, regenerated once from the rebuilt upstream, committed."""

    def build(folder: Path) -> None:
        _build_pristine(folder, pristine_upstream, generation_memo)

    return build_once(tmp_path_factory, "pristine", build) / "project"


@pytest.fixture
def packages_only(pristine_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The hand-written packages of the pristine project (all the check reads), and a cache folder for it."""
    root = tmp_path / "project"
    for package in PACKAGES:
        shutil.copytree(pristine_project / package, root / package, symlinks=True)
    shutil.copy2(pristine_project / "pyproject.toml", root / "pyproject.toml")
    monkeypatch.setenv("E2B_CODEGEN_CACHE", str(tmp_path / "cache"))
    return root


def generated_files(root: Path) -> dict[str, bytes]:
    """The generated folders' files under `root`, by their path from it."""
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for folder in GENERATED_ROOTS
        for path in sorted((root / folder).rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def _build_pristine(folder: Path, pristine_upstream: Path, generation_memo: Path) -> None:
    root = folder / "project"
    for rel in project_files():
        source = ROOT / rel
        # This checkout's pending changelog fragments would change every release plan the tests expect.
        if "/changelog.d/" in rel and source.name != "README.md":
            continue
        if source.is_file():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, root / rel)
    repo = Repo.init(root, initial_branch="main")
    repo.git.update_environment(**_GIT_ENV)
    commit_all(root, "snapshot of the project")
    cache = folder / "cache"
    with using_toolchain(functools.partial(MemoToolchain, shared=generation_memo)):
        result = run_in_process(
            root, "generate", env={"E2B_RUNTIME_REPO": str(pristine_upstream), "E2B_CODEGEN_CACHE": str(cache)}
        )
    assert result.code == 0, result.text
    if git_status(root):
        # Uncommitted work in this checkout; the tests need a consistent baseline.
        commit_all(root, "regenerate")
    # Its 750 loose objects in one pack: each test's copy (`project`) creates half the files, in half the CPU.
    repo.git.repack("-a", "-d", "-q")


@pytest.fixture
def project(pristine_project: Path, tmp_path: Path) -> Path:
    """A per-test copy of the pristine project (with its git repository)."""
    return copy_tree(pristine_project, tmp_path / "project")


# The configured upstream made unreachable: the offline fallback is only for it
# (an unusable E2B_RUNTIME_REPO is an error). Run with OFFLINE to unset the override.
UNREACHABLE_URL = "/nonexistent/runtime"
OFFLINE: dict[str, str | None] = {"E2B_RUNTIME_REPO": None}


def configure_unreachable_upstream(root: Path, url: str = UNREACHABLE_URL) -> None:
    """Point [tool.codegen] runtime-repo (and the lock, which records it) at `url`, committed."""
    pyproject = root / "pyproject.toml"
    text = pyproject.read_text()
    configured = 'runtime-repo = "https://github.com/e2b-dev/runtime.git"'
    assert text.count(configured) == 1
    pyproject.write_text(text.replace(configured, f"runtime-repo = {json.dumps(url)}"))
    lock_path = root / "spec/openapi.lock.json"
    lock = json.loads(lock_path.read_text())
    lock["runtime"] = url
    lock_path.write_text(json.dumps(lock, indent=2) + "\n")
    commit_all(root, "the configured upstream is unreachable")


@pytest.fixture
def offline_project(project: Path) -> Path:
    """A project whose configured upstream cannot be reached (run it with OFFLINE)."""
    configure_unreachable_upstream(project)
    return project


@pytest.fixture
def git_calls(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every git command GitPython runs in this process."""
    import git.cmd

    calls: list[list[str]] = []
    original = git.cmd.Git.execute

    def spy(self: Any, command: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append([str(c) for c in command] if isinstance(command, (list, tuple)) else [str(command)])
        return original(self, command, *args, **kwargs)

    monkeypatch.setattr(git.cmd.Git, "execute", spy)
    return calls


@contextlib.contextmanager
def unchanged(root: Path) -> Iterator[None]:
    """Assert the block leaves the tree byte-identical."""
    before = tree_digest(root)
    yield
    after = tree_digest(root)
    assert after == before, {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}


# --- bytecode planted in a generated folder (issue 20, item 3) -----------------

SDK_DIR = "packages/python-sdk"
PLANTED_MODULE = "e2b/api/error_codes.py"


def plant_bytecode(root: Path, marker: Path) -> str:
    """Commit (`git add -f`, past .gitignore) bytecode of error_codes.py plus a payload that writes `marker`.

    Compiled with UNCHECKED_HASH, so Python loads it without looking at the
    source: `import e2b.api.error_codes` runs the payload.  Returns its path.
    """
    import py_compile

    source = root / SDK_DIR / PLANTED_MODULE
    # Where Python looks without a PYTHONPYCACHEPREFIX (which the suite sets: importlib's
    # cache_from_source would name a path under it).
    cached = source.parent / "__pycache__" / f"{source.stem}.{sys.implementation.cache_tag}.pyc"
    payload = source.read_text() + f"\nimport pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"
    scratch = root.parent / "payload.py"
    scratch.write_text(payload)
    py_compile.compile(
        str(scratch),
        cfile=str(cached),
        dfile=str(source),
        invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
    )
    scratch.unlink()
    rel = cached.relative_to(root).as_posix()
    git_repo(root).git.add("-f", "--", rel)
    commit_all(root, "planted bytecode")
    return rel


def import_generated(root: Path, *, write_bytecode: bool) -> None:
    """`import e2b.api.error_codes` from the tree's SDK, in a fresh interpreter."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    env["PYTHONPATH"] = str(root / SDK_DIR)
    if not write_bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    subprocess.run(
        [sys.executable, "-c", "import e2b.api.error_codes, e2b.api.client"],
        cwd=root / SDK_DIR, env=env, check=True, capture_output=True, timeout=120,
    )  # fmt: skip
