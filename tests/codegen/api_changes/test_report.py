"""The report's Markdown: no name from the spec becomes HTML, a link, an image or a mention (issue 31, point 10)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from codegen.api_changes.compare import compare_specs
from codegen.api_changes.report import ApiChange, ApiChangeReport, code_span, markdown_text, render_report
from codegen.openapi.document import load_spec
from codegen.openapi.operation_map import load_operation_map
from codegen.openapi.sdk_filter import filter_spec
from tests.codegen.hostile_specs import NEW_SANDBOX

ROOT = Path(__file__).resolve().parents[3]

HOSTILE_NAMES = [
    "x` <img src=x onerror=alert(1)> `",
    "x`` [click](https://evil.example) ``",
    "`leading and trailing`",
    "```",
    " spaced ",
    "![pic](https://evil.example/p.png)",
    "<script>alert(1)</script>",
    "@someone please look",
]


def html_of(markdown: str) -> str:
    return str(MarkdownIt("commonmark").render(markdown))


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_a_code_span_holds_exactly_the_text(name: str) -> None:
    rendered = MarkdownIt("commonmark").parseInline(code_span(name))[0].children
    assert rendered is not None and [token.type for token in rendered] == ["code_inline"]
    assert rendered[0].content == name


@pytest.mark.parametrize(("text", "fence"), [("plain", "`"), ("a`b", "``"), ("a``b`c", "```"), ("````", "`````")])
def test_the_fence_is_longer_than_any_backtick_run_inside(text: str, fence: str) -> None:
    assert re.match(r"`+", code_span(text)).group() == fence  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "detail",
    ["optional", "POST /sandboxes/{sandboxID}/resume", '"snapshotting"', "SandboxA -> SandboxB", "sandbox_paused"],
)
def test_plain_details_stay_as_they_are(detail: str) -> None:
    assert markdown_text(detail) == detail


def test_escaped_controls_stay_plain_text() -> None:
    """What `printable` makes of a control, a backslash before a letter, escapes nothing in Markdown."""
    assert markdown_text("was \u202e\x1b") == "was \\u202e\\x1b"


@pytest.mark.parametrize(
    "detail",
    [
        *(name for name in HOSTILE_NAMES if name != " spaced "),  # spaces are plain text in a detail
        "see https://evil.example",
        "www.evil.example",
        "mail me@evil.example",
        "_emphasis_",
        "*bold*",
        "back\\*slash*",
        "a | b",
    ],
)
def test_a_detail_markdown_could_read_something_into_is_a_code_span(detail: str) -> None:
    shown = markdown_text(detail)
    assert shown == code_span(detail)


def test_hostile_names_in_the_report_render_as_code_only() -> None:
    """What GitHub shows of the fragment, the release pull request and CHANGELOG.md: no tag, no link."""
    changes = tuple(
        ApiChange("minor", "enum value added", f"getSandbox 200 response .{name}", name) for name in HOSTILE_NAMES
    )
    markdown = render_report(ApiChangeReport(changes), old_ref="runtime@a", new_ref="runtime@b")
    html = html_of(markdown)
    assert not re.search(r"<(?!/?(h1|h2|p|ul|li|code|strong)>)", html), html
    for name in HOSTILE_NAMES:
        assert f"<code>getSandbox 200 response .{_escaped(name)}</code>" in html
    # Each line of the report is still one line: a name cannot start a heading or a list item.
    assert markdown.count("\n- enum value added: ") == len(HOSTILE_NAMES)


def _escaped(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _filtered(text: str) -> dict[str, Any]:
    operations = load_operation_map(ROOT / "spec/operations.yml", display_path="spec/operations.yml")
    return filter_spec(
        load_spec(text.encode()).data, tags=("sandboxes", "snapshots", "templates"), operations=operations
    )


def test_names_from_a_spec_reach_the_report_as_code_never_as_markdown() -> None:
    """The report is bump's changelog fragment and the release pull request's body: GitHub renders it."""
    spec = (ROOT / "spec/openapi.yml").read_text()
    assert spec.count(NEW_SANDBOX) == 1
    hostile = spec.replace(
        NEW_SANDBOX, NEW_SANDBOX + '        "x`` <img src=x onerror=alert(1)> ``":\n          type: string\n'
    )
    report = render_report(compare_specs(_filtered(spec), _filtered(hostile)), old_ref="a", new_ref="b")
    # A fence longer than the name's backtick runs, and a space where the name ends in backticks.
    assert (
        "- property added: ``` createSandbox request body .x`` <img src=x onerror=alert(1)> `` ``` (optional)" in report
    )
    html = html_of(report)
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
