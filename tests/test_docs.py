"""The documentation site's sources hold together, and its shell sessions run as written.

The site itself is built (`nox -s docs`, mkdocs --strict) and read in
tests/test_docs_site.py. These tests check what a build would not, or what is
cheaper to check without one:
that mkdocs.yml names only pages that exist and every page is in its nav; that the
maintainers' start-here page opens their nav, stays under 2,000 words and names every other page; that
the references name a real click group and a real package; that the package
READMEs link to pages that exist; that the tables the code prints (the CLI's
exit statuses, codegen's API change classification) are the pages' own; and
that the shell sessions of the users' guide's command-line, local-server and
SDK pages run as written, by tests/command_blocks.py (its conventions: `sh` exits 0, `console` prints
what is shown, a server command is started on a free port). The command-line
page talks to a server this test starts; the local-server page to the one its
own `nox -s serve` line starts, and the SDK page's "Try it locally" to the
`e2b-local-api --any-api-key` it shows. Their Python blocks, and the package
READMEs', run in tests/test_doc_examples.py.
"""

from __future__ import annotations

import html
import importlib
import re
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
import yaml

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

DOCS = ROOT / "docs"
MKDOCS = ROOT / "mkdocs.yml"

# The pages whose sessions run, as the README's command-line and local-server
# sections do: a page that starts no server of its own talks to one the test starts.
EXECUTED = ("users/cli.md", "users/local-server.md", "users/sdk.md")
# Pages that show commands without running them here, and why. A new page
# with a `sh` or `console` block must be in one of the two lists.
SHOWN_NOT_RUN = {
    "index.md": "the two commands that start everything: the whole test suite, which runs this test",
    "maintainers/codegen.md": "regenerates this tree in place; tests/codegen/upstream/test_history.py rebuilds",
    "maintainers/bump.md": "moves the pin against the real upstream; tests/codegen/commands/test_bump.py runs bump",
    "maintainers/releasing.md": "writes versions and changelogs; tests/release runs the release tools on a copy",
}

# The maintainers' way in (issue 44): first in their nav, one sitting long.
START_HERE = "maintainers/start-here.md"
START_HERE_WORDS = 2000

LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)\s]*)?\)")


def nav_files(entries: object) -> Iterator[str]:
    """Every page mkdocs.yml's nav names (a list of `page`, `Title: page` or `Title: [...]`)."""
    if isinstance(entries, str):
        yield entries
    elif isinstance(entries, list):
        for entry in entries:
            yield from nav_files(entry)
    elif isinstance(entries, dict):
        for value in entries.values():
            yield from nav_files(value)
    else:
        raise AssertionError(f"mkdocs.yml: unexpected nav entry {entries!r}")


def config() -> dict[str, object]:
    loaded = yaml.safe_load(MKDOCS.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def pages() -> list[str]:
    return sorted(path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*.md"))


def page_text(page: str) -> str:
    return (DOCS / page).read_text(encoding="utf-8")


def test_the_nav_names_only_pages_that_exist_and_every_page() -> None:
    named = list(nav_files(config()["nav"]))
    missing = [page for page in named if not (DOCS / page).is_file()]
    assert missing == [], f"mkdocs.yml names pages that do not exist under docs/: {missing}"
    assert len(named) == len(set(named)), "mkdocs.yml names a page twice"
    assert sorted(named) == pages(), "a page under docs/ is missing from mkdocs.yml's nav"


def test_start_here_is_first_short_and_leads_to_every_maintainers_page() -> None:
    """The way in stays a way in: read first, in under 2,000 words, naming every other page."""
    nav = config()["nav"]
    assert isinstance(nav, list)
    maintainers = next(section for section in nav if isinstance(section, dict) and "Maintainers" in section)
    first_pages = list(nav_files(maintainers))[:2]
    assert first_pages == ["maintainers/index.md", START_HERE], "start-here.md must open the maintainers' nav"
    text = page_text(START_HERE)
    words = len(text.split())
    assert words < START_HERE_WORDS, f"{START_HERE} has {words} words: keep it under {START_HERE_WORDS}"
    reading_order = text.split("## What to read next", 1)[1]
    linked = {link for link in LINK.findall(reading_order) if "/" not in link}
    others = {page.removeprefix("maintainers/") for page in pages() if page.startswith("maintainers/")}
    missing = others - {"index.md", "start-here.md"} - linked
    assert missing == set(), f"{START_HERE}'s reading order does not name {sorted(missing)}"
    assert "start-here.md" in LINK.findall(page_text("maintainers/index.md"))[0]


def test_the_site_downloads_nothing_at_build_time() -> None:
    loaded = config()
    theme = loaded["theme"]
    assert isinstance(theme, dict) and theme.get("font") is False, "theme.font must be false: no Google fonts"
    plugins = loaded["plugins"]
    assert isinstance(plugins, list)
    names = {next(iter(p)) if isinstance(p, dict) else p for p in plugins}
    assert not names & {"social", "privacy", "material/social", "material/privacy"}, names


def test_the_references_name_real_objects() -> None:
    cli_page = page_text("reference/cli.md")
    module = re.search(r"^    :module: (\S+)$", cli_page, flags=re.M)
    command = re.search(r"^    :command: (\S+)$", cli_page, flags=re.M)
    assert module and command, "reference/cli.md: a `::: click-reference` block with :module: and :command:"
    group = getattr(importlib.import_module(module.group(1)), command.group(1))
    assert isinstance(group, click.Group) and "sandbox" in group.commands

    identifiers = re.findall(r"^::: (\S+)$", page_text("reference/api.md"), flags=re.M)
    assert identifiers == ["e2b"]
    for identifier in identifiers:
        assert importlib.import_module(identifier).__all__


def test_the_package_readmes_link_to_the_guide() -> None:
    for readme in sorted(ROOT.glob("packages/*/README.md")):
        targets = [(readme.parent / link).resolve() for link in LINK.findall(readme.read_text(encoding="utf-8"))]
        guide = [target for target in targets if target.is_relative_to(DOCS)]
        assert guide, f"{readme.relative_to(ROOT)} has no link to a page under docs/"
        for target in guide:
            assert target.is_file(), f"{readme.relative_to(ROOT)} links to {target.relative_to(ROOT)}, which is missing"


def test_every_page_with_commands_is_run_or_says_why_not() -> None:
    with_commands = {page for page in pages() if steps(page_text(page))}
    assert set(EXECUTED) <= with_commands, "an executed page shows no commands"
    unclassified = with_commands - set(EXECUTED) - set(SHOWN_NOT_RUN)
    assert unclassified == set(), (
        f"pages with sh/console blocks neither run nor listed in SHOWN_NOT_RUN: {unclassified}"
    )


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_repository(tmp_path_factory.mktemp("repo"))


@pytest.mark.slow
@needs_curl
@needs_nox
@pytest.mark.parametrize("page", EXECUTED)
def test_the_page_runs_as_written(page: str, workdir: Path) -> None:
    text = page_text(page)
    port = free_port()
    servers: list[Server] = []
    try:
        if not any(is_server(step.command) for step in steps(text)):
            servers.append(start_server(with_port("e2b-local-api --log-level warning", port), ROOT, port))
        run_blocks(text, f"docs/{page}", workdir, port, servers)
        assert len(servers) == 1
    finally:
        for server in servers:
            server.stop()


def test_the_executed_pages_have_commands() -> None:
    cli = steps(page_text("users/cli.md"))
    console = [step for step in cli if step.expected is not None]
    assert any(step.expected is None for step in cli) and len(console) > 10 and any(s.expected for s in console)
    server = steps(page_text("users/local-server.md"))
    assert any(step.expected is None for step in server) and any(is_server(step.command) for step in server)


def test_the_exit_status_table_is_the_cli_s() -> None:
    from e2b_cli.errors import MEANINGS

    rows = re.findall(r"^\| (\d+) \| (.*) \|$", page_text("users/cli.md"), flags=re.M)
    # A cell's code with a | in it is an HTML code element (a code span would need \|, shown as written).
    as_markdown = [(int(status), html.unescape(re.sub(r"</?code>", "`", meaning))) for status, meaning in rows]
    assert as_markdown == [(int(status), meaning) for status, meaning in MEANINGS.items()]


def test_the_api_change_classification_table_is_codegens() -> None:
    from codegen.api_changes.compare import rules_markdown

    assert rules_markdown() in page_text("maintainers/bump.md"), (
        "docs/maintainers/bump.md's classification table differs from api_changes.compare.RULES:"
        " paste in rules_markdown()'s output"
    )


def test_the_proto_classification_table_is_codegens() -> None:
    from codegen.api_changes.rules import proto_rules_markdown

    assert proto_rules_markdown() in page_text("maintainers/bump.md"), (
        "docs/maintainers/bump.md's proto table differs from api_changes.rules.PROTO_RULES:"
        " paste in proto_rules_markdown()'s output"
    )
