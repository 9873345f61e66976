"""Adding an operation to the SDK takes the edits docs/maintainers/codegen.md lists, and no more.

A copy of the project gets an operation its upstream gained (a real commit in a real git
repository), the operation map's entry and one hand-written async method, exactly; bump moves the
pin, regenerates (the operations table, the client, the sync twin) and type-checks the hand-written
code. Then the derived sync method calls a server on 127.0.0.1.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from tests.codegen.conftest import ROOT, Result, Upstream, git_repo, replace_once, run_in_process

GUIDE = ROOT / "docs/maintainers/codegen.md"
MAIN = "packages/python-sdk/e2b/sandbox_async/main.py"
TWIN = "packages/python-sdk/e2b/sandbox_sync/main.py"
TABLE = "packages/python-sdk/e2b/api/operations.py"


def add_touch_operation(text: str) -> str:
    """The upstream gains POST /sandboxes/{sandboxID}/touch (no operationId, as the real runtime's)."""
    anchor = "  /sandboxes/{sandboxID}/metrics:\n"
    block = (
        "  /sandboxes/{sandboxID}/touch:\n"
        "    parameters:\n"
        '      - $ref: "#/components/parameters/sandboxID"\n'
        "    post:\n"
        "      summary: Mark a sandbox as used\n"
        "      tags: [sandboxes]\n"
        "      security:\n"
        "        - ApiKeyAuth: []\n"
        "      responses:\n"
        '        "202":\n'
        "          description: Marked.\n"
        '        "401":\n'
        '          $ref: "#/components/responses/Unauthorized"\n'
        "\n"
    )
    return replace_once(text, anchor, block + anchor)


MAP_ENTRY = "touchSandbox: POST /sandboxes/{sandboxID}/touch\n"
METHOD = '''
    @sandbox_method
    async def touch(self, **opts: Unpack[ApiParams]) -> None:
        """Mark the sandbox as used."""
        async with _call(self._opts(opts), logic.expected("touchSandbox")) as client:
            await ops.touch_sandbox.asyncio_detailed(self.sandbox_id, client=client)
'''
# The class body's last method stays last (see its comment): the new one goes before it.
BEFORE = "    # Last in the class body:"


def required_steps() -> list[str]:
    """The guide's required checklist for adding an operation, one entry per box."""
    text = GUIDE.read_text(encoding="utf-8")
    section = text[text.index("### Adding an operation to the SDK") :]
    required = section[section.index("Required, every time") : section.index("As the operation needs:")]
    return re.findall(r"^- \[ \] \*\*(.+?)\*\*", required, flags=re.MULTILINE)


def test_the_guide_lists_the_edits_this_test_makes() -> None:
    # Two edits in the project (the map, the method), then the one command: if a step is added to
    # the guide or to this test, the other follows.
    assert required_steps() == ["The operation map", "One method", "`nox -s bump -- <runtime commit>`"]


class _Recorder(BaseHTTPRequestHandler):
    seen: ClassVar[list[tuple[str, str]]] = []

    def do_POST(self) -> None:
        self.seen.append((self.command, self.path))
        self.send_response(202)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def api() -> Iterator[tuple[str, list[tuple[str, str]]]]:
    seen: list[tuple[str, str]] = []
    handler = type("Handler", (_Recorder,), {"seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=30)


@pytest.mark.usefixtures("warm_cache")  # its bump type-checks the hand-written packages
def test_an_operation_is_the_map_entry_and_one_method(
    project: Path, upstream: Upstream, cache: Path, api: tuple[str, list[tuple[str, str]]]
) -> None:
    added = upstream.commit_edit(add_touch_operation)
    with (project / "spec/operations.yml").open("a", encoding="utf-8") as operations:
        operations.write(MAP_ENTRY)
    main = project / MAIN
    main.write_text(replace_once(main.read_text(encoding="utf-8"), BEFORE, METHOD.lstrip("\n") + "\n" + BEFORE))
    edited = sorted(git_repo(project).git.diff("--name-only").split())
    assert edited == [MAIN, "spec/operations.yml"]

    result: Result = run_in_process(
        project, "bump", added, env={"E2B_RUNTIME_REPO": upstream.url, "E2B_CODEGEN_CACHE": str(cache)}
    )
    assert result.code == 0, result.text
    table = (project / TABLE).read_text(encoding="utf-8")
    assert '"touchSandbox": frozenset({202}),' in table  # the spec's success, not a constant by hand
    assert '"touch_sandbox": "e2b.api.client.api.sandboxes.touch_sandbox",' in table
    twin = (project / TWIN).read_text(encoding="utf-8")
    assert "def touch(self, **opts: Unpack[ApiParams]) -> None:" in twin
    assert "ops.touch_sandbox.sync_detailed(self.sandbox_id, client=client)" in twin

    # The derived sync method, from the copy's SDK, against a real socket.
    url, seen = api
    env = {k: v for k, v in os.environ.items() if not k.startswith("E2B_")}
    env.update(PYTHONPATH=str(project / "packages/python-sdk"), PYTHONDONTWRITEBYTECODE="1")
    code = (
        "import e2b, sys\n"
        f"assert e2b.__file__.startswith({str(project)!r}), e2b.__file__\n"
        f"print(e2b.Sandbox('sbx1').touch(api_key='key', api_url={url!r}))\n"
        f"print(e2b.Sandbox.touch('sbx2', api_key='key', api_url={url!r}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["None", "None"]
    assert seen == [("POST", "/sandboxes/sbx1/touch"), ("POST", "/sandboxes/sbx2/touch")]
