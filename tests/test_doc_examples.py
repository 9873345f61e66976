"""Every Python block of the users' guide and the package READMEs runs, as a saved script, against a local server.

The pages are `docs/users/*.md` (the SDK's page first: its first block is the
quick start), `docs/index.md` and `packages/*/README.md`. Their ```` ```python ````
blocks are taken in order, and each one is run as a user who saved it would
run it:

- written to a file of its own and run as `python FILE` with this virtualenv's
  interpreter (`sys.executable`, isolated mode), in a fresh subprocess and an
  empty folder; it must exit 0 within `BLOCK_TIMEOUT`;
- with `E2B_API_URL` and `E2B_API_KEY` naming a local API server that this
  module starts on a free 127.0.0.1 port, configured as `e2b-local-api
  --any-api-key` is (the SDK page's "Try it locally"): the control plane and,
  on the same port, every sandbox's envd, its commands run in bubblewrap. No
  other `E2B_` variable is set: `E2B_DEBUG` is unset, so every call reaches the
  server, and the SDK finds envd at the API's own loopback URL. A block that
  names a port of its own reaches nothing; where sandboxes cannot run processes
  (no bubblewrap), a block that uses the data plane is skipped, saying why;
- after a reset of the server: a block depends only on what it creates itself.

So a block is a complete script: its imports, no `await` outside a function
(an async example is `async def main()` with `asyncio.run(main())`; a
top-level `await` fails here, with a message saying so, before anything runs)
and no deprecated call (`-W error::DeprecationWarning:__main__`).

A block that cannot run (the code of another SDK version, an id only a cloud
account has) says why on the line before its fence, in an HTML comment that
the site does not show: `<!-- not-run: the reason -->`. A marker without a
reason, one that precedes no Python block, or a Python fence spelt otherwise
(`py`, `python3`, `pycon`) fails `test_every_block_runs_or_says_why_not`.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from e2b_local_api import create_app
from e2b_local_api.cli import auth_config, parse_args
from e2b_local_api.dataplane.routing import Router
from e2b_local_api.http.http_protocol import server_config
from e2b_local_api.runtime import isolation
from e2b_local_api.runtime.registry import Runtimes

from tests.command_blocks import ROOT, environment
from tests.local_api.conftest import control_client, free_socket, serving, url_of

QUICK_START_PAGE = "docs/users/sdk.md"
# Generous: a block takes about 0.3 s (most of it importing the SDK); a loaded machine may take many times that.
BLOCK_TIMEOUT = 120
# Any key is accepted (`--any-api-key`); this one is not the server's default key, so nothing relies on it.
API_KEY = "e2b_docs_example_key"
# What the documented `e2b-local-api --any-api-key` runs with, less the port (a free one here).
SERVER_FLAGS = ["--any-api-key"]
# The Python blocks, and the spellings that are refused so that no block escapes these tests.
PYTHON = "python"
OTHER_PYTHON_SPELLINGS = frozenset({"py", "python3", "py3", "pycon", "pyi", "ipython"})
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`]*)$")
MARKER = re.compile(r"^\s*<!--\s*not-run:(?P<reason>.*?)-->\s*$")
# Anything that looks like an attempt at a marker; one that MARKER does not accept is a mistake.
MARKER_LIKE = re.compile(r"<!--\s*not[-_ ]?run", re.IGNORECASE)
# A block that reaches a sandbox's envd: it needs sandboxes that run processes.
DATA_PLANE = re.compile(r"\.(commands|files|pty)\.|\.is_running\(")


def pages() -> list[str]:
    """The pages whose Python blocks run, the quick start's first; paths relative to the repository."""
    found = [
        *sorted(path.relative_to(ROOT).as_posix() for path in (ROOT / "docs" / "users").glob("*.md")),
        "docs/index.md",
        *sorted(path.relative_to(ROOT).as_posix() for path in ROOT.glob("packages/*/README.md")),
    ]
    found.remove(QUICK_START_PAGE)
    return [QUICK_START_PAGE, *(page for page in found if (ROOT / page).is_file())]


@dataclass(frozen=True)
class Block:
    page: str
    line: int  # of the opening fence, 1-based
    heading: str  # the last heading above it
    code: str
    not_run: str | None  # the marker's reason; None for a block that runs

    @property
    def label(self) -> str:
        return f"{self.page}:{self.line}"


@dataclass
class Page:
    blocks: list[Block]
    problems: list[str]


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return stripped.startswith(fence[0] * len(fence)) and stripped.strip(fence[0]) == ""


def read_page(page: str, text: str) -> Page:
    """The fenced Python blocks of `text`, with their markers, and what is wrong with how they are written."""
    lines = text.splitlines()
    blocks: list[Block] = []
    problems: list[str] = []
    heading = ""
    marker: tuple[int, str] | None = None  # the line and reason of a marker waiting for its block
    index = 0
    while index < len(lines):
        line = lines[index]
        opening = FENCE.match(line)
        if opening is None:
            if line.startswith("#"):
                heading = line.lstrip("#").strip()
            found = MARKER.match(line)
            if found is not None:
                if marker is not None:
                    problems.append(f"{page}:{marker[0]}: a not-run marker that precedes no Python block")
                marker = (index + 1, found.group("reason").strip())
            elif MARKER_LIKE.search(line):
                problems.append(f"{page}:{index + 1}: write the marker as `<!-- not-run: the reason -->`: {line!r}")
            elif marker is not None and line.strip():
                problems.append(f"{page}:{marker[0]}: a not-run marker that precedes no Python block")
                marker = None
            index += 1
            continue
        start, indent, fence = index + 1, len(opening.group("indent")), opening.group("fence")
        info = opening.group("info").strip().lstrip("{").lstrip(".")
        lang = info.split()[0].rstrip("}").lower() if info else ""
        body: list[str] = []
        index += 1
        while index < len(lines) and not _closes(lines[index], fence):
            body.append(lines[index][indent:] if lines[index][:indent].strip() == "" else lines[index])
            index += 1
        if index == len(lines):
            problems.append(f"{page}:{start}: a fence that is never closed")
        index += 1
        if lang in OTHER_PYTHON_SPELLINGS:
            problems.append(f"{page}:{start}: a Python block is fenced ```{PYTHON}, not ```{lang}")
        if lang != PYTHON:
            if marker is not None:
                problems.append(f"{page}:{marker[0]}: a not-run marker before a {lang or 'plain'} block")
                marker = None
            continue
        reason = None
        if marker is not None:
            reason = marker[1]
            if not reason:
                problems.append(f"{page}:{marker[0]}: a not-run marker must say why the block does not run")
            marker = None
        blocks.append(Block(page, start, heading, "\n".join(body) + "\n", reason))
    if marker is not None:
        problems.append(f"{page}:{marker[0]}: a not-run marker that precedes no Python block")
    return Page(blocks, problems)


def read_all() -> dict[str, Page]:
    return {page: read_page(page, (ROOT / page).read_text(encoding="utf-8")) for page in pages()}


PAGES = read_all()
BLOCKS = [block for page in PAGES.values() for block in page.blocks]
RUN = [block for block in BLOCKS if block.not_run is None]


def syntax_problem(block: Block) -> str | None:
    """Why the block would not run as a saved script, or None."""
    try:
        compile(block.code, block.label, "exec", dont_inherit=True)
    except SyntaxError as error:
        try:
            compile(block.code, block.label, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
        except SyntaxError:
            return f"{block.label}: not valid Python: {error}"
        return (
            f"{block.label}: `await` outside a function, which a saved script cannot run: write the example as "
            "`async def main() -> None: ...` and end it with `asyncio.run(main())`"
        )
    return None


@dataclass
class LocalServer:
    url: str
    control: httpx.Client
    isolation: isolation.Isolation

    def reset(self) -> None:
        self.control.post("/_local/reset").raise_for_status()


@pytest.fixture(scope="module")
def server() -> Iterator[LocalServer]:
    """One server for the module's blocks (each starts from a reset), as `e2b-local-api --any-api-key` runs it:
    the control plane and the sandboxes' envd behind one router, the sandboxes' folders in a temporary state
    folder of the server's own (under the system's, which bubblewrap's id map can traverse; pytest's cannot)."""
    found = isolation.probe()
    runtimes = Runtimes(found)
    app = create_app(auth_config(parse_args(SERVER_FLAGS)), runtimes=runtimes)
    sock = free_socket()
    with serving(server_config(Router(app, runtimes), log_level="critical"), sock):
        try:
            with control_client(url_of(sock)) as control:
                yield LocalServer(url_of(sock), control, found)
        finally:
            runtimes.close_soon()  # as the CLI's server does on its exit signal: open streams end, sandboxes go


def block_environment(url: str) -> dict[str, str]:
    """A user's environment (no E2B_ variable, no proxy for the loopback) with the local server's URL and a key."""
    env = {key: value for key, value in environment().items() if not key.startswith("PYTHON")}
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    env["E2B_API_URL"] = url
    env["E2B_API_KEY"] = API_KEY
    return env


def script_name(block: Block) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", block.page.removesuffix(".md")).strip("_") + f"_line{block.line}.py"


@pytest.mark.parametrize("block", RUN, ids=[block.label for block in RUN])
def test_the_block_runs(block: Block, server: LocalServer, tmp_path: Path) -> None:
    problem = syntax_problem(block)
    assert problem is None, problem
    if not server.isolation.available and DATA_PLANE.search(block.code):
        pytest.skip(f"{block.label} uses the data plane; sandboxes cannot run here: {server.isolation.reason}")
    script = tmp_path / script_name(block)
    script.write_text(block.code, encoding="utf-8")
    server.reset()
    command = [sys.executable, "-I", "-W", "error::DeprecationWarning:__main__", script.name]
    try:
        done = subprocess.run(
            command,
            cwd=tmp_path,
            env=block_environment(server.url),
            capture_output=True,
            text=True,
            timeout=BLOCK_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as timeout:
        raise AssertionError(f"{block.label} (under {block.heading!r}) ran over {BLOCK_TIMEOUT} s") from timeout
    assert done.returncode == 0, (
        f"{block.label} (under {block.heading!r}) exited {done.returncode} against the local server:\n"
        f"--- stderr ---\n{done.stderr}--- stdout ---\n{done.stdout}--- the block ---\n{block.code}"
    )


def test_every_block_runs_or_says_why_not() -> None:
    problems = [problem for page in PAGES.values() for problem in page.problems]
    problems += [problem for block in RUN if (problem := syntax_problem(block)) is not None]
    assert problems == [], "\n".join(problems)
    not_run = [block for block in BLOCKS if block.not_run is not None]
    assert all(block.not_run for block in not_run)
    assert len(RUN) > len(not_run), "most blocks run: " + ", ".join(f"{b.label} ({b.not_run})" for b in not_run)


def test_the_quick_start_runs_first() -> None:
    first = BLOCKS[0]
    assert first.page == QUICK_START_PAGE and first.heading == "Quick start", (
        f"the first Python block is the SDK page's quick start, not {first.label} under {first.heading!r}"
    )
    assert first.not_run is None, "the quick start runs"
    assert RUN[0] is first


def test_the_guides_and_the_sdk_readme_have_blocks_that_run() -> None:
    ran = {block.page for block in RUN}
    assert {QUICK_START_PAGE, "docs/users/retries.md", "packages/python-sdk/README.md"} <= ran, ran
    assert sum(block.page == QUICK_START_PAGE for block in RUN) >= 10


def test_the_parser_finds_blocks_markers_and_mistakes() -> None:
    text = "\n".join(
        [
            "# Title",
            "```python",
            "print(1)",
            "```",
            "## Shown",
            "<!-- not-run: needs a cloud account -->",
            "```python",
            "Sandbox.connect('real-id')",
            "```",
            "- a list item:",
            "",
            "    ```python",
            "    print(2)",
            "    ```",
            "<!-- not-run: -->",
            "```python",
            "x = 1",
            "```",
            "<!-- not-run: nothing follows -->",
            "text",
            "````md",
            "<!-- not-run: inside a fence, shown as text -->",
            "```python",
            "```",
            "````",
            "```py",
            "print(3)",
            "```",
            "<!-- not run: misspelt -->",
        ]
    )
    page = read_page("page.md", text)
    assert [(b.line, b.heading, b.code, b.not_run) for b in page.blocks] == [
        (2, "Title", "print(1)\n", None),
        (7, "Shown", "Sandbox.connect('real-id')\n", "needs a cloud account"),
        (12, "Shown", "print(2)\n", None),
        (16, "Shown", "x = 1\n", ""),
    ]
    assert page.problems == [
        "page.md:15: a not-run marker must say why the block does not run",
        "page.md:19: a not-run marker that precedes no Python block",
        "page.md:26: a Python block is fenced ```python, not ```py",
        "page.md:29: write the marker as `<!-- not-run: the reason -->`: '<!-- not run: misspelt -->'",
    ]


def test_a_top_level_await_is_refused_with_the_fix() -> None:
    awaiting = Block("page.md", 3, "Async", "from e2b import AsyncSandbox\nsbx = await AsyncSandbox.create()\n", None)
    problem = syntax_problem(awaiting)
    assert problem is not None and "asyncio.run(main())" in problem and problem.startswith("page.md:3:")
    broken = Block("page.md", 3, "Broken", "print(\n", None)
    assert (syntax_problem(broken) or "").startswith("page.md:3: not valid Python")
    assert syntax_problem(Block("page.md", 3, "Fine", "import asyncio\nasyncio.run(asyncio.sleep(0))\n", None)) is None


def test_the_block_environment_reaches_only_the_local_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("E2B_DEBUG", "true")
    monkeypatch.setenv("E2B_DOMAIN", "example.invalid")
    env = block_environment("http://127.0.0.1:1")
    assert env["E2B_API_URL"] == "http://127.0.0.1:1" and env["E2B_API_KEY"] == API_KEY
    assert {key for key in env if key.startswith("E2B_")} == {"E2B_API_URL", "E2B_API_KEY"}
