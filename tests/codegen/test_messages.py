"""One prefix for every message; one line per step with its duration and what it used; --quiet."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from codegen.cli import parser
from codegen.messages import Messages
from tests.codegen.conftest import Result
from toolkit.errors import Problem

STEP_LINE = re.compile(r"codegen: (?P<name>\S+) +(?P<seconds>\d+\.\d\d) s \((?P<used>.+)\)")


def collect(quiet: bool = False) -> tuple[Messages, list[str], list[str]]:
    err: list[str] = []
    out: list[str] = []
    return Messages(quiet=quiet, err=err.append, out=out.append), err, out


def test_every_kind_of_message_has_the_one_prefix() -> None:
    messages, err, out = collect()
    messages("progress")
    messages("warning: from a `say` callback")
    messages.warning("direct")
    messages.error(Problem("broken", where="spec/contract.yml:3", remedy="fix it"))
    messages.interrupted("nothing was written")
    messages.result("clean: all good\n  a detail line")
    assert err == [
        "codegen: progress",
        "codegen: warning: from a `say` callback",
        "codegen: warning: direct",
        "codegen: error: spec/contract.yml:3: broken\n  -> fix it",
        "codegen: interrupted: nothing was written",
    ]
    assert out == ["codegen: clean: all good", "  a detail line"]


def test_a_step_says_its_duration_and_what_it_used_only_when_it_succeeds() -> None:
    messages, err, _ = collect()
    with messages.step("fetch") as note:
        note("upstream /tmp/runtime")
        note("runtime@54f8c7f")
    with pytest.raises(RuntimeError), messages.step("generate"):
        raise RuntimeError("the failure says more than a timing")
    assert len(err) == 1
    match = STEP_LINE.fullmatch(err[0])
    assert match is not None, err
    assert match["name"] == "fetch" and match["used"] == "upstream /tmp/runtime, runtime@54f8c7f"


def test_quiet_keeps_only_problems_and_the_verdict() -> None:
    messages, err, out = collect(quiet=True)
    messages("progress")
    with messages.step("fetch") as note:
        note("x")
    messages("warning: kept")
    messages.error("kept too")
    messages.result("clean: verdict")
    assert err == ["codegen: warning: kept", "codegen: error: kept too"]
    assert out == ["codegen: clean: verdict"]


def test_a_generation_prints_every_step_in_order(project: Path, run: Callable[..., Result]) -> None:
    result = run(project, "check", "--no-cache")
    assert result.code == 0, result.text
    steps = [m["name"] for line in result.err.splitlines() if (m := STEP_LINE.fullmatch(line))]
    # In process too, every step runs (only the tools' processes are remembered: tests/codegen/memo_toolchain.py).
    expected = [
        "fetch",
        "spec",
        "envd",
        "contract",
        "filter",
        "overlays",
        "twins",
        "format",
        "generate",
        "validate",
        "stamp",
        "compare",
    ]
    assert steps == expected
    assert all(line.startswith("codegen: ") for line in result.text.splitlines() if not line.startswith("  "))


@pytest.mark.parametrize("where", ["before", "after"])
def test_quiet_check_prints_the_verdict_alone(project: Path, run: Callable[..., Result], where: str) -> None:
    args = ("--quiet", "check") if where == "before" else ("check", "--quiet")
    result = run(project, *args)
    assert result.code == 0, result.text
    assert result.err == ""
    assert result.out.startswith("codegen: clean: ") and result.out.count("\n") == 1


@pytest.mark.parametrize("verb", ["generate", "check", "bump", "rebuild-runtime"])
def test_every_verb_has_a_description_and_one_example(verb: str) -> None:
    subparsers = parser()._subparsers
    assert subparsers is not None
    (action,) = subparsers._group_actions
    sub = action.choices[verb]  # type: ignore[index]
    text = sub.format_help()
    assert sub.description and len(sub.description) > 80
    assert text.count("example:") == 1 and f"python -m codegen {verb}" in text.split("example:")[1]


def test_printable_escapes_controls_and_bidi_but_keeps_text() -> None:
    from toolkit.printable import printable

    assert printable("clean: runtime@54f8c7f, ünïcode") == "clean: runtime@54f8c7f, ünïcode"
    shown = printable("x\x1b[2J\x1b]0;title\x07\ncodegen: clean\r\x85\u202e")
    assert shown == "x\\x1b[2J\\x1b]0;title\\x07\\ncodegen: clean\\r\\x85\\u202e"
    assert shown.isprintable()


def test_printable_escapes_separators_and_format_characters_like_the_cli() -> None:
    """U+2028/U+2029 would split a line for `str.splitlines`; zero-width and format characters hide."""
    from e2b_cli.printable import printable as cli_printable

    from toolkit.printable import printable

    hostile = "evil.py\u2028codegen: clean\u2029\u200b\ufeff\u00ad\u2060\u00a0\u3000\udcff\U000e0001"
    shown = printable(hostile)
    assert shown == ("evil.py\\u2028codegen: clean\\u2029\\u200b\\ufeff\\xad\\u2060\\xa0\\u3000\\udcff\\U000e0001")
    assert shown.splitlines() == [shown] and shown.isascii()
    kept = "ünïcode 中文 テキスト e\u0301 ✓"
    assert printable(kept) == kept
    every = "".join(map(chr, range(0x3000))) + "\u2028\U000e0001\udcff"
    assert printable(every) == cli_printable(every)  # the two copies keep one rule


def test_a_problem_renders_data_escaped_one_line_per_field() -> None:
    """Data inside a problem (a spec name, a file name, a tool's output) cannot add a line or a control."""
    problem = Problem(
        "name 'a\nb\x1b[2J' refused",
        where="spec/openapi.yml:3 (/paths/~1x\u202e)",
        remedy="rename\r it",
        detail=("tool said \x1b]0;owned\x07", "second line"),
    )
    assert problem.render().split("\n") == [
        "spec/openapi.yml:3 (/paths/~1x\\u202e): name 'a\\nb\\x1b[2J' refused",
        "    tool said \\x1b]0;owned\\x07",
        "    second line",
        "  -> rename\\r it",
    ]


def test_every_message_is_escaped_line_by_line_whoever_forgot() -> None:
    messages, err, out = collect()
    messages("progress \x1b[1A")
    messages.warning("from data \u202e")
    messages.result("clean\n  detail \x9b")
    messages.show("# report\n- `x\x07`")
    assert err == ["codegen: progress \\x1b[1A", "codegen: warning: from data \\u202e"]
    assert out == ["codegen: clean", "  detail \\x9b", "# report\n- `x\\x07`"]


def test_the_api_change_report_escapes_spec_names_in_the_fragment_too() -> None:
    from codegen.api_changes.report import ApiChange, ApiChangeReport, render_report

    change = ApiChange("major", "operation removed", "GET /x\x1b[2J", detail="was \u202e", why="because\x07")
    text = render_report(ApiChangeReport((change,)), old_ref="runtime@a", new_ref="runtime@b")
    assert "- operation removed: `GET /x\\x1b[2J` (was \\u202e) [1]" in text
    assert "1. because\\x07" in text
    assert text.replace("\n", "").isprintable()
