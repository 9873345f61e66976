"""The README's command-line and local-server sections run as written.

Their `sh` and `console` blocks are run, in order, by one bash per section, in
a copy of this repository, as a user would on a fresh machine after the
README's first command: `python3 -m nox -s dev` really builds `.nox/dev` there
(from the hashed lock; uv's cache makes it quick) and `source` really activates
it. Each section talks to a local server on a free 127.0.0.1 port (the README
says 3000): the command-line section to one this test starts, the local-server
section to the one its own `nox -s serve` line starts. An `sh` command must
exit 0; a `console` command must print what the README shows, up to the
sandbox ids and timestamps, which differ per run. The machinery that runs
them is tests/command_blocks.py, shared with the docs pages' sessions.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from .command_blocks import (
    ROOT,
    Server,
    copy_repository,
    free_port,
    is_server,
    needs_curl,
    needs_nox,
    run_blocks,
    start_server,
    steps,
    with_port,
)

README = ROOT / "README.md"

pytestmark = needs_curl


def section(title: str) -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def run_section(title: str, workdir: Path, port: str, servers: list[Server]) -> None:
    """Run a section's commands; the servers it starts go into `servers`, for the caller to stop."""
    run_blocks(section(title), f"README § {title}", workdir, port, servers)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the repository, without built environments, as a fresh clone would be."""
    return copy_repository(tmp_path_factory.mktemp("repo"))


@pytest.fixture
def cli_server() -> Iterator[tuple[str, Server]]:
    port = free_port()
    server = start_server(with_port("e2b-local-api --log-level warning", port), ROOT, port)
    try:
        yield port, server
    finally:
        server.stop()


def test_the_sections_are_found_and_have_commands() -> None:
    for title in ("The command line", "The local API server"):
        assert any(step.expected is None for step in steps(section(title))), title
    console = [s for s in steps(section("The command line")) if s.expected is not None]
    assert len(console) > 10 and any(s.expected for s in console)
    assert any(is_server(s.command) for s in steps(section("The local API server")))


@needs_nox
def test_the_command_line_section(workdir: Path, cli_server: tuple[str, Server]) -> None:
    port, _ = cli_server
    started: list[Server] = []
    run_section("The command line", workdir, port, started)
    assert started == []


@needs_nox
def test_the_local_api_server_section(workdir: Path) -> None:
    port = free_port()
    servers: list[Server] = []
    try:
        run_section("The local API server", workdir, port, servers)
        assert len(servers) == 1
    finally:
        for server in servers:
            server.stop()


def test_the_exit_status_table_is_the_cli_s() -> None:
    from e2b_cli.errors import MEANINGS

    rows = re.findall(r"^\| (\d+) \| (.*) \|$", section("The command line"), flags=re.M)
    assert [(int(status), meaning.replace("\\|", "|")) for status, meaning in rows] == [
        (int(status), meaning) for status, meaning in MEANINGS.items()
    ]


def test_the_api_change_classification_table_is_codegens() -> None:
    from codegen.api_changes.compare import rules_markdown

    table = rules_markdown()
    assert table in README.read_text(encoding="utf-8"), (
        "the README's classification table differs from api_changes.compare.RULES: paste in rules_markdown()'s output"
    )
