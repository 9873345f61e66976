"""The API change report: its data and its Markdown.

Built by `codegen.api_changes.compare.compare_specs`; kept apart so the comparison
module stays readable.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from toolkit.printable import printable

Level = Literal["none", "patch", "minor", "major"]

LEVELS: tuple[Level, ...] = ("none", "patch", "minor", "major")

# Every change the report knows; `codegen.api_changes.compare.RULES` gives each its level.
ChangeKind = Literal[
    "operation removed",
    "operation renamed",
    "operation moved",
    "upstream operationId renamed",
    "operation added",
    "operation deprecated",
    "operation no longer deprecated",
    "parameter removed",
    "parameter added",
    "property removed",
    "property added",
    "type changed",
    "model renamed",
    "model removed",
    "made required",
    "made optional",
    "made nullable",
    "made non-nullable",
    "deprecated",
    "enum value added",
    "enum value removed",
    "validation tightened",
    "validation loosened",
    "validation changed",
    "request body added",
    "request body removed",
    "request body made required",
    "request body made optional",
    "response code added",
    "response code removed",
    "response body added",
    "response body removed",
    "response header added",
    "response header removed",
    "security scheme removed",
    "security requirement added",
    "security scheme changed",
    "security alternative added",
    "security made optional",
    "security scheme description changed",
    "error code added",
    "error code removed",
]
# The envd protos' changes (`codegen.api_changes.protos`; `codegen.api_changes.rules.PROTO_RULES`).
ProtoChangeKind = Literal[
    "service removed",
    "service renamed",
    "service added",
    "RPC removed",
    "RPC renamed",
    "RPC added",
    "streaming kind changed",
    "request type changed",
    "response type changed",
    "message removed",
    "message renamed",
    "message added",
    "field removed",
    "field renamed",
    "field number changed",
    "field type changed",
    "cardinality changed",
    "oneof changed",
    "JSON name changed",
    "field added",
    "enum removed",
    "enum renamed",
    "enum added",
    "enum value removed",
    "enum value renamed",
    "enum value number changed",
    "enum value added",
    "options changed",
]
# What picks between two rules of one kind: required or optional, a 2xx status or another; a
# response header the generated client surfaces or not; a security change to the SDK's own
# credential (spec/contract.yml) or to another one.
Variant = (
    Literal[
        "required",
        "optional",
        "2xx",
        "other",
        "surfaced",
        "not surfaced",
        "the SDK's credential",
        "another credential",
    ]
    | None
)
_RANK: dict[str, int] = {level: rank for rank, level in enumerate(LEVELS)}


@dataclass(frozen=True)
class ApiChange:
    """One change users of the SDK can observe."""

    level: Level
    kind: ChangeKind | ProtoChangeKind
    location: str  # "pauseSandbox request body .force"
    detail: str = ""
    why: str | None = None  # set when the level is not what the spec suggests


def sort_key(change: ApiChange) -> tuple[int, str, str, str, str]:
    """Most severe first, then by location: the order of the report and its text."""
    return (-_RANK[change.level], change.location, change.kind, change.detail, change.why or "")


@dataclass(frozen=True)
class ApiChangeReport:
    """All changes, most severe first; `level` is what the SDK release needs."""

    changes: tuple[ApiChange, ...]
    description_changes: int = 0

    @property
    def level(self) -> Level:
        floor: Level = "patch" if self.description_changes else "none"
        return max((floor, *(c.level for c in self.changes)), key=_RANK.__getitem__)

    @property
    def forcing(self) -> tuple[ApiChange, ...]:
        """The changes that set `level` (empty when none needs a release: descriptions, operationId renames)."""
        level = self.level
        return tuple(c for c in self.changes if c.level == level and level != "none")


_SECTIONS: tuple[tuple[Level, str], ...] = (
    ("major", "Breaking (major)"),
    ("minor", "New (minor)"),
    ("patch", "Other"),
    ("none", "Upstream only (no SDK change)"),
)
_FORCING_SHOWN = 3


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def code_span(text: str) -> str:
    """`text` as a Markdown code span, whose content Markdown shows exactly as it is (CommonMark 6.1).

    Its delimiter is a backtick run longer than any run inside, so no backtick of the text can end
    the span; a space pads text that starts or ends with a backtick (or with a space at each end,
    one of which Markdown strips).  Inside, nothing is HTML, a link or a mention.
    """
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    padded = text.startswith("`") or text.endswith("`") or (text[:1] == text[-1:] == " " and text.strip(" "))
    pad = " " if padded else ""
    return f"{fence}{pad}{text or ' '}{pad}{fence}"


# Text Markdown shows as it is, between words: letters, digits and punctuation that starts nothing
# (no `<` HTML or autolink, no `[`/`!` link or image, no `@` mention or e-mail, no `:` in a URL,
# no emphasis, code or escape).  An `_` only inside a word, where it never emphasizes.
_PLAIN = re.compile(r"[A-Za-z0-9 .,;'\"(){}/+=?>%-]*")
_LONE_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
# A backslash before a letter or digit escapes nothing in Markdown: `printable`'s `\x1b`, `\u202e`.
_LETTER_ESCAPE = re.compile(r"\\(?=[A-Za-z0-9])")


def markdown_text(text: str) -> str:
    """Spec text for the report: as it is when Markdown cannot read anything into it, else a code span."""
    shown = printable(text)
    words = _LETTER_ESCAPE.sub("", shown)
    if _PLAIN.fullmatch(words.replace("_", "")) and not _LONE_UNDERSCORE.search(words) and "www." not in words.lower():
        return shown
    return code_span(shown)


def render_report(report: ApiChangeReport, *, old_ref: str, new_ref: str) -> str:
    """Markdown for the terminal and the changelog fragment; same input, same text.

    Names and details come from the spec: escaped (`printable`), so neither the
    terminal nor the committed fragment carries a control or bidi character;
    and for Markdown, since the fragment reaches CHANGELOG.md and the release
    pull request: a location is always a code span (`code_span`), a detail
    one unless it is plain words (`markdown_text`), so that no spec name
    becomes HTML, a link, an image or a mention.
    """
    lines = [f"# API changes: {old_ref} -> {new_ref}", "", semver_line(report)]
    # A flagged rule often fires at many locations; its reason is printed once,
    # as a numbered note, so the list stays scannable.
    notes: list[str] = []
    lines += render_sections(report, notes)
    lines += render_notes(notes)
    return "\n".join(lines) + "\n"


def semver_line(report: ApiChangeReport) -> str:
    """`Semver: **level** — forced by: ...`, the changes that set the level (at most a few) named."""
    forcing = sorted(report.forcing, key=sort_key)
    reasons = [f"{c.kind} {code_span(printable(c.location))}" for c in forcing[:_FORCING_SHOWN]]
    if len(forcing) > _FORCING_SHOWN:
        reasons.append(f"and {len(forcing) - _FORCING_SHOWN} more")
    if report.level == "patch" and report.description_changes:
        reasons.append(_plural(report.description_changes, "description-only change"))
    summary = "forced by: " + "; ".join(reasons) if reasons else "no API changes"
    return f"Semver: **{report.level}** — {summary}"


def render_sections(
    report: ApiChangeReport,
    notes: list[str],
    *,
    titles: Sequence[tuple[Level, str]] = _SECTIONS,
    heading: str = "##",
) -> list[str]:
    """The changes grouped by level under `titles`, each group after a blank line; reasons go to `notes`."""
    lines: list[str] = []
    changes = sorted(report.changes, key=sort_key)
    for level, title in titles:
        section = [_render_change(c, notes) for c in changes if c.level == level]
        if level == "patch" and report.description_changes:
            section.append(f"- {_plural(report.description_changes, 'description-only change')}")
        if section:
            lines += ["", f"{heading} {title}", *section]
    return lines


def render_notes(notes: Sequence[str], *, heading: str = "##") -> list[str]:
    """The numbered notes the changes' `[n]` refer to."""
    if not notes:
        return []
    return ["", f"{heading} Notes", *(f"{n}. {printable(why)}" for n, why in enumerate(notes, 1))]


_FRAGMENT_SHOWN = 12


def render_fragment(
    report: ApiChangeReport,
    *,
    old_ref: str,
    new_ref: str,
    level: str,
    python_lines: Sequence[str] = (),
    envd_lines: Sequence[str] = (),
) -> str:
    """The changelog fragment: one sentence and a short list, no headings (CHANGELOG.md puts it in a bullet).

    The changes the SDK's users see (not "Upstream only"), then `envd_lines` (the data plane's, from
    `fragment_lines`) and `python_lines` (the Python API's), each `- ...`, at most `_FRAGMENT_SHOWN` in
    all; the whole report goes to the release pull request.  Escaped as the report is.  `level`: the
    fragment's, which the data plane or the Python API can raise above the report's.
    """
    shown = fragment_lines(report)
    shown += envd_lines
    shown += python_lines
    if not shown:
        return f"The runtime API moved from {old_ref} to {new_ref} with no change the SDK's users can see.\n"
    hidden = len(shown) - _FRAGMENT_SHOWN if len(shown) > _FRAGMENT_SHOWN else 0
    if hidden:
        shown = [*shown[: _FRAGMENT_SHOWN - 1], f"- and {hidden + 1} more: the release pull request has the report"]
    return "\n".join([f"The runtime API from {old_ref} to {new_ref} (semver: {level}):", *shown]) + "\n"


def fragment_lines(report: ApiChangeReport, prefix: str = "") -> list[str]:
    """The fragment's lines for the changes the SDK's users see, each `- {prefix}kind: location (detail)`."""
    shown = [_render_change(c, None) for c in sorted(report.changes, key=sort_key) if c.level != "none"]
    if report.description_changes:
        shown.append(f"- {_plural(report.description_changes, 'description-only change')}")
    return [f"- {prefix}{line[2:]}" for line in shown]


def _render_change(change: ApiChange, notes: list[str] | None) -> str:
    line = f"- {change.kind}: {code_span(printable(change.location))}"
    if change.detail:
        line += f" ({markdown_text(change.detail)})"
    if change.why and notes is not None:
        if change.why not in notes:
            notes.append(change.why)
        line += f" [{notes.index(change.why) + 1}]"
    return line
