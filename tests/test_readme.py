"""The README is the front page: the two commands, the sessions, and links into docs/.

Its prose moved to the documentation site (docs/, tested by tests/test_docs.py,
whose command-line and local-server pages run as written). What stays here is
checked here: the README's only shell block is the two commands that start
everything (shown, not run: they are the whole test suite, which runs this
test), so no session lives in the README where nothing would run it; and
every link it makes into the repository names a file that exists and, for a
docs page, a heading that exists on that page.
"""

from __future__ import annotations

import re

from .command_blocks import ROOT, steps

README = ROOT / "README.md"
# A relative link: [text](path) or [text](path#anchor); web links are not followed.
LINK = re.compile(r"\]\((?!https?://)([^)#\s]+)(?:#([^)\s]+))?\)")
FIRST_COMMANDS = [
    "python3 -m pip install --require-hashes -r requirements/nox.txt",
    "python3 -m nox -s codegen tests",
]


def slug(heading: str) -> str:
    """The anchor mkdocs (Python-Markdown's toc) gives a heading."""
    text = re.sub(r"[`*]", "", heading).strip().lower()
    text = re.sub(r"[^\w\s-]", "", text)
    return re.sub(r"[-\s]+", "-", text)


def anchors(markdown: str) -> set[str]:
    without_code = re.sub(r"```.*?```", "", markdown, flags=re.S)
    return {slug(title) for title in re.findall(r"^#{1,6} (.+)$", without_code, flags=re.M)}


def test_the_readme_shows_only_the_two_first_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert [step.command for step in steps(text)] == FIRST_COMMANDS
    assert all(step.expected is None for step in steps(text))


def test_the_readme_links_resolve() -> None:
    links = LINK.findall(README.read_text(encoding="utf-8"))
    into_docs = [(path, anchor) for path, anchor in links if path.startswith("docs/")]
    assert len(into_docs) >= 10, "the README links into docs/: its guides' pages"
    for path, anchor in links:
        target = ROOT / path
        assert target.is_file(), f"README.md links to {path}, which does not exist"
        if anchor:
            assert anchor in anchors(target.read_text(encoding="utf-8")), (
                f"README.md links to {path}#{anchor}: no heading there has that anchor"
            )


def test_slug_is_mkdocs_s() -> None:
    assert slug("Migrating to 2.0") == "migrating-to-20"
    assert slug("How `nox -s codegen` works") == "how-nox-s-codegen-works"
    assert slug("Releasing: `nox -s bump -- <ref>`") == "releasing-nox-s-bump-ref"
