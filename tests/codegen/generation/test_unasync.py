"""The sync twins' table: each substitution on code, on prose, and what it leaves alone or refuses."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from codegen.generation.unasync import (
    _ASYNC_LEFT,
    MAX_SOURCE_BYTES,
    SUBSTITUTIONS,
    header,
    source_path,
    twin_path,
    unasync_source,
    unasync_tree,
)
from toolkit.errors import ToolError
from toolkit.paths import ASYNC_SOURCE_DIR, SYNC_TWIN_DIR

ROOT = Path(__file__).resolve().parents[3]
SOURCE = f"{ASYNC_SOURCE_DIR}/main.py"


def sync(code: str) -> str:
    return unasync_source(code.encode(), "m.py")


# (async source, its sync twin): each entry of the table at least once.
CASES = [
    ("async def f(): pass\n", "def f(): pass\n"),
    ("async  def f(): pass\n", "def f(): pass\n"),
    ("async with c as x: pass\n", "with c as x: pass\n"),
    ("async for x in y: pass\n", "for x in y: pass\n"),
    ("x = await f()\n", "x = f()\n"),
    ("x = (await  f())\n", "x = (f())\n"),
    ("x = [y async for y in z]\n", "x = [y for y in z]\n"),
    ("def __aenter__(self): pass\n", "def __enter__(self): pass\n"),
    ("def __aexit__(self, *e): pass\n", "def __exit__(self, *e): pass\n"),
    ("def __aiter__(self): pass\n", "def __iter__(self): pass\n"),
    ("def __anext__(self): raise StopAsyncIteration\n", "def __next__(self): raise StopIteration\n"),
    ("stream.aclose()\n", "stream.close()\n"),
    ("body = await r.aread()\n", "body = r.read()\n"),
    ("chunks = r.aiter_bytes()\n", "chunks = r.iter_bytes()\n"),
    ("from collections.abc import AsyncIterator, AsyncIterable\n", "from collections.abc import Iterator, Iterable\n"),
    ("from typing import AsyncGenerator\n", "from typing import Generator\n"),
    (
        "from contextlib import AsyncExitStack, asynccontextmanager\n",
        "from contextlib import ExitStack, contextmanager\n",
    ),
    ("c = httpx.AsyncClient()\n", "c = httpx.Client()\n"),
    ("c = pyqwest.Client(pyqwest.HTTPTransport())\n", "c = pyqwest.SyncClient(pyqwest.SyncHTTPTransport())\n"),
    ("p: ProcessClient | FilesystemClient\n", "p: ProcessClientSync | FilesystemClientSync\n"),
    ("import asyncio\nasyncio.sleep(1)\n", "import time\ntime.sleep(1)\n"),
    ("asyncio . sleep(1)\n", "time.sleep(1)\n"),
    ("r = op.asyncio_detailed(client=c)\n", "r = op.sync_detailed(client=c)\n"),
    ("from e2b._http import async_call as _call\n", "from e2b._http import sync_call as _call\n"),
    ("from e2b._http import async_retry_sleep\n", "from e2b._http import retry_sleep\n"),
    ("t = _http._async_transport(config)\n", "t = _http._sync_transport(config)\n"),
    ("class AsyncSandbox: pass\n", "class Sandbox: pass\n"),
    ("p: AsyncSandboxPaginator | AsyncSnapshotPaginator\n", "p: SandboxPaginator | SnapshotPaginator\n"),
    ("from e2b.sandbox_async.paginator import x\n", "from e2b.sandbox_sync.paginator import x\n"),
    ("from e2b.sandbox._flavour_async import steps\n", "from e2b.sandbox._flavour_sync import steps\n"),
    ("class AsyncDataPlane: pass\n", "class DataPlane: pass\n"),
    ("h: AsyncCommandHandle | AsyncWatchHandle\n", "h: CommandHandle | WatchHandle\n"),
    ("class Files(AsyncWatching, AsyncStreamingInput): pass\n", "class Files(Watching, StreamingInput): pass\n"),
    ("def r(d: AsyncWriteData) -> AsyncFileStreamReader: pass\n", "def r(d: WriteData) -> FileStreamReader: pass\n"),
]


@pytest.mark.parametrize(("source", "twin"), CASES)
def test_each_substitution_of_the_table_on_code(source: str, twin: str) -> None:
    assert sync(source) == twin


@pytest.mark.parametrize("key", list(SUBSTITUTIONS))
def test_every_entry_of_the_table_has_a_case(key: tuple[str, ...]) -> None:
    """A new entry comes with its case above."""
    spelled = {" ".join(key), "".join(key)}
    assert any(re.search(rf"(?<!\w)(?:{'|'.join(map(re.escape, spelled))})(?!\w)", source) for source, _ in CASES)


@pytest.mark.parametrize("key", list(SUBSTITUTIONS))
def test_no_replacement_is_a_name_the_twin_may_not_keep(key: tuple[str, ...]) -> None:
    """The check for names the table leaves async reads the source's: it relies on this."""
    replacement = SUBSTITUTIONS[key]
    assert not any(_ASYNC_LEFT.fullmatch(word) for word in re.findall(r"\w+", replacement))


def test_prose_gets_whole_words_only() -> None:
    source = (
        'def f():\n    """`async with AsyncSandbox.create() as sbx:` then `await sbx.kill()`;\n'
        '    AsyncSandboxPaginator, not AsyncSandboxes; awaited, asynchronous."""\n'
        "    # await the answer from async_call\n"
    )
    assert sync(source) == (
        'def f():\n    """`with Sandbox.create() as sbx:` then `sbx.kill()`;\n'
        '    SandboxPaginator, not AsyncSandboxes; awaited, asynchronous."""\n'
        "    # the answer from sync_call\n"
    )


def test_a_module_name_in_prose_is_left_as_written() -> None:
    """The twin's docstring may name its hand-written source: that stays true in the twin."""
    source = 'X = "edit e2b/sandbox_async/main.py, e2b.sandbox_async, e2b.sandbox._flavour_async"\n'
    assert sync(source) == source


def test_f_strings_and_other_names_are_left_alone() -> None:
    source = 'def r(self):\n    return f"AsyncSandbox(id={self.await_count!r}, {my_async_call})"\n'
    assert sync(source) == 'def r(self):\n    return f"Sandbox(id={self.await_count!r}, {my_async_call})"\n'


def test_lines_keep_their_numbers() -> None:
    source = (ROOT / SOURCE).read_text(encoding="utf-8")
    twin = sync(source)
    assert twin.count("\n") == source.count("\n")
    ast.parse(twin)


@pytest.mark.parametrize(
    ("source", "kept"),
    [
        ("import asyncio\nasyncio.gather(a, b)\n", "asyncio"),
        ("class AsyncThing: pass\n", "AsyncThing"),
        ("x = make_async\n", "make_async"),
        ("from x import async_helper\n", "async_helper"),
        ("t = _http._async_helper(c)\n", "_async_helper"),
    ],
)
def test_a_name_the_table_does_not_cover_is_refused_with_its_line(source: str, kept: str) -> None:
    with pytest.raises(ToolError) as raised:
        sync("\n" + source)
    (problem,) = raised.value.problems
    assert problem.message == f"the sync twin would keep {kept!r}: the table has no substitution for it"
    assert problem.where is not None and problem.where.startswith("m.py:")
    assert problem.remedy is not None and "SUBSTITUTIONS in codegen/generation/unasync.py" in problem.remedy


@pytest.mark.parametrize(
    ("data", "where"),
    [
        (b"x = '\xff'\n", "m.py"),
        (b'x = 1\ny = """never closed\n', "m.py:2"),
        (b'"""Doc."""\nimport os\nfrom __future__ import annotations\n', "m.py:3"),
        (b"x = 1\n  y = 2\n", "m.py:2"),
        (b"x = '\x00'\n", "m.py"),
    ],
)
def test_a_source_that_is_not_python_text_is_refused_naming_it(data: bytes, where: str) -> None:
    with pytest.raises(ToolError) as raised:
        unasync_source(data, "m.py")
    (problem,) = raised.value.problems
    assert problem.message.startswith("cannot be read as Python: ")
    assert problem.where == where


def test_the_tree_maps_each_module_to_its_twin_s_path() -> None:
    sources: dict[str, bytes | None] = {
        f"{ASYNC_SOURCE_DIR}/main.py": b"async def f(): pass\n",
        f"{ASYNC_SOURCE_DIR}/commands/handle.py": b"class AsyncSandbox: pass\n",
        f"{ASYNC_SOURCE_DIR}/notes.txt": b"not a module\n",
    }
    assert unasync_tree(sources) == {
        f"{SYNC_TWIN_DIR}/commands/handle.py": b"class Sandbox: pass\n",
        f"{SYNC_TWIN_DIR}/main.py": b"def f(): pass\n",
    }
    assert source_path(twin_path(SOURCE)) == SOURCE
    assert header(SOURCE).decode().splitlines()[1] == f"# {SOURCE}"
    assert all(len(line) <= 120 for line in header(f"{ASYNC_SOURCE_DIR}/commands/command_input_handle.py").splitlines())


def test_a_source_that_is_no_regular_file_or_too_large_is_refused() -> None:
    with pytest.raises(ToolError, match="is not a regular file"):
        unasync_tree({SOURCE: None})
    with pytest.raises(ToolError, match="bytes, the most read of a source"):
        unasync_tree({SOURCE: b"#" * (MAX_SOURCE_BYTES + 1)})
