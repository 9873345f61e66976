"""The built documentation site reads as the code does: the CLI reference as `--help`, the API reference whole.

One `nox -s docs` build (mkdocs --strict, into a temporary folder, once per test run) is read
as HTML: every `\\b` block of the `e2b` command's help and epilog (the examples, the exit
statuses, the `--json` error shape) is a code block of the reference page, no code on any page
shows a backslash-escaped bar, and every entry of the API reference has a description.
"""

from __future__ import annotations

import inspect
import re
import subprocess
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import click
import pytest

from tests.command_blocks import ROOT, environment, needs_nox
from tests.once_per_run import build_once

pytestmark = [pytest.mark.slow, needs_nox]


def _build(folder: Path) -> None:
    # -R: an existing .nox/docs is reused as it is; the packages in it are this tree's, editable.
    command = ["python3", "-m", "nox", "-R", "-s", "docs", "--", "--site-dir", str(folder)]
    done = subprocess.run(command, cwd=ROOT, env=environment(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_once(tmp_path_factory, "docs-site", _build)


class Page(HTMLParser):
    """A built page's preformatted blocks, code elements and API reference entries, as text."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.pre: list[str] = []
        self.code: list[str] = []
        self.entries: dict[str, str] = {}  # an API entry's anchor -> the text of its own description
        self._open: list[tuple[str, str]] = []  # (tag, its mkdocstrings role) of every open element
        self._entry: list[str] = []  # the anchors of the API entries being read, innermost last
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        classes = (found.get("class") or "").split()
        role = next((c for c in ("doc-object", "doc-contents", "doc-children") if c in classes), "")
        if "doc-heading" in classes and self._open_roles()[-1:] == ["doc-object"]:
            self._entry.append(found.get("id") or "")
            self.entries[self._entry[-1]] = ""
        if tag in ("pre", "code"):
            (self.pre if tag == "pre" else self.code).append("")
        self._open.append((tag, role))

    def handle_endtag(self, tag: str) -> None:
        while self._open:
            closed, role = self._open.pop()
            if role == "doc-object" and self._entry:
                self._entry.pop()
            if closed == tag:
                return

    def handle_data(self, data: str) -> None:
        tags = [tag for tag, _ in self._open]
        if "pre" in tags:
            self.pre[-1] += data
        if "code" in tags:
            self.code[-1] += data
        # A description is the entry's own contents, not its members' (in doc-children) nor its heading.
        if self._entry and self._open_roles()[-1:] == ["doc-contents"]:
            self.entries[self._entry[-1]] += data

    def _open_roles(self) -> list[str]:
        return [role for _, role in self._open if role]


def read(site: Path, page: str) -> Page:
    return Page((site / page / "index.html").read_text(encoding="utf-8"))


def commands(command: click.Command) -> Iterator[click.Command]:
    yield command
    for sub in getattr(command, "commands", {}).values():
        yield from commands(sub)


def kept_blocks(text: str) -> Iterator[list[str]]:
    """The lines of each paragraph of a help text that click's `\\b` keeps as they are."""
    for paragraph in re.split(r"\n\s*\n", inspect.cleandoc(text)):
        lines = paragraph.splitlines()
        if lines and lines[0].strip() == "\b" and len(lines) > 2:
            yield [line.strip() for line in lines[1:]]


def test_every_kept_block_of_the_help_and_epilog_is_a_code_block(site: Path) -> None:
    from e2b_cli.main import cli

    page = read(site, "reference/cli")
    pre_lines = {line.strip() for block in page.pre for line in block.splitlines()}
    blocks = [block for command in commands(cli) for text in (command.help, command.epilog) if text
              for block in kept_blocks(text)]  # fmt: skip
    examples = [block for block in blocks if block[0] == "Examples:"]
    assert len(examples) > 10, "the `e2b` command's help texts and epilog have 14 Examples: blocks"
    assert any(block[0] == "Exit status:" for block in blocks), "the top-level epilog's exit statuses"
    for block in blocks:
        body = block[1:] if block[0].endswith(":") else block
        missing = [line for line in body if line not in pre_lines]
        assert missing == [], f"{block[0]!r}: lines not in a code block of reference/cli/: {missing}"


def test_the_top_level_epilog_is_on_the_reference_page(site: Path) -> None:
    text = (site / "reference/cli/index.html").read_text(encoding="utf-8")
    for words in ("Exit status:", "Environment: E2B_API_KEY, E2B_API_URL, E2B_DOMAIN", '{"error": {"status": 503'):
        assert words in text.replace("&quot;", '"'), words


def test_no_code_on_any_page_shows_an_escaped_bar(site: Path) -> None:
    shown = {
        f"{path.relative_to(site)}: {code}"
        for path in sorted(site.rglob("*.html"))
        for code in Page(path.read_text(encoding="utf-8")).code
        if "\\|" in code
    }
    assert shown == set()


def test_every_api_reference_entry_has_a_description(site: Path) -> None:
    entries = read(site, "reference/api").entries
    assert len(entries) > 150 and "e2b.SandboxMetrics.mem_used" in entries
    bare = sorted(anchor for anchor, text in entries.items() if not text.strip())
    assert bare == [], f"API reference entries with no description: {bare}"


def test_metric_fields_say_their_units(site: Path) -> None:
    entries = read(site, "reference/api").entries
    for name in ("disk_total", "disk_used", "mem_total", "mem_used", "mem_cache"):
        assert "bytes" in entries[f"e2b.SandboxMetrics.{name}"], name
    assert "percent" in entries["e2b.SandboxMetrics.cpu_used_pct"]
    assert "MiB" in entries["e2b.SandboxInfo.memory_mb"]
