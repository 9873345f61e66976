"""Read untrusted YAML into plain JSON-shaped data, noting the line of every node.

How it works, and why: docs/maintainers/design.md, "codegen/openapi/plain_yaml.py".
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.events import (
    AliasEvent,
    CollectionStartEvent,
    DocumentStartEvent,
    Event,
    MappingEndEvent,
    MappingStartEvent,
    NodeEvent,
    ScalarEvent,
    SequenceEndEvent,
)

from codegen.openapi.json_pointer import Segments, format_pointer, parse_pointer
from toolkit.errors import Problem, ToolError

MAX_YAML_BYTES = 5 * 1024 * 1024
# Real specs nest a dozen levels; 64 leaves room while keeping every later
# recursive walk (references, validator, filter) far from Python's stack limit.
MAX_DEPTH = 64
# Past this many, more messages bury the first ones rather than help.
MAX_PROBLEMS = 20
# Objects (mappings): the runtime's 4,300-line spec has 1,700.  The 5 MiB cap alone would let
# 100,000 small schemas through, and the validator takes a fifth of a millisecond on each.
MAX_MAPPINGS = 10_000
# Items of one list (`enum`, `required`, `parameters`, `tags`, `x-error-codes`...): the runtime's longest
# has 16.  datamodel-code-generator takes time quadratic in an enum's length (10,000 values: 5 s).
MAX_SEQUENCE_ITEMS = 2_000
# Scalars, keys included: the runtime's spec has 6,010.  Lists of lists dodge both bounds above.
MAX_SCALARS = 100_000
# No spec needs more digits (int64 has 19), and Python refuses to print an int past 4,300.
MAX_INT_DIGITS = 1_000

# PyYAML's wheels carry libyaml; the pure-Python parser gives the same events.
_EventParser = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_CORE = "tag:yaml.org,2002:"
# `!` is the non-specific tag: text, whatever the scalar looks like.
_TEXT_TAGS = frozenset((None, "!", f"{_CORE}str"))
_TYPED_TAGS: dict[str, type] = {
    f"{_CORE}null": type(None),
    f"{_CORE}bool": bool,
    f"{_CORE}int": int,
    f"{_CORE}float": float,
}
_MAPPING_TAGS = frozenset((None, "!", f"{_CORE}map"))
_SEQUENCE_TAGS = frozenset((None, "!", f"{_CORE}seq"))

# The YAML 1.2 core schema (YAML 1.2.2, section 10.3.2), tried in this order.
_NULL = re.compile(r"~|null|Null|NULL|")
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT_BASES: tuple[tuple[re.Pattern[str], Callable[[str], int]], ...] = (
    (re.compile(r"[-+]?[0-9]+"), int),
    (re.compile(r"0o[0-7]+"), lambda text: int(text[2:], 8)),
    (re.compile(r"0x[0-9a-fA-F]+"), lambda text: int(text[2:], 16)),
)
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_INFINITY = re.compile(r"([-+]?)\.(?:inf|Inf|INF)")
_NAN = re.compile(r"\.(?:nan|NaN|NAN)")


@dataclass(frozen=True)
class YamlTree:
    """Plain data from a YAML file, plus where each node was written."""

    data: Any
    display_path: str
    lines: Mapping[Segments, int] = field(repr=False)

    def line_of(self, pointer: str | Segments) -> int | None:
        """1-based line of the node, or of its nearest existing ancestor."""
        segments = parse_pointer(pointer) if isinstance(pointer, str) else pointer
        for end in range(len(segments), -1, -1):
            line = self.lines.get(segments[:end])
            if line is not None:
                return line
        return None

    def where(self, pointer: str | Segments) -> str:
        """Where a problem is: `spec/openapi.yml:LINE (pointer)`."""
        text = pointer if isinstance(pointer, str) else format_pointer(pointer)
        line = self.line_of(pointer)
        place = f"{self.display_path}:{line}" if line is not None else self.display_path
        return f"{place} ({text or '/'})"


def load_yaml_file(path: Path, *, display_path: str, what: str) -> YamlTree:
    """One of this repository's YAML files (`what`: "the contract"); unreadable is one problem."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ToolError(Problem(f"cannot read {what}: {error.strerror}", where=display_path)) from error
    return load_yaml(data, display_path=display_path)


def load_yaml(data: bytes, *, display_path: str, max_bytes: int = MAX_YAML_BYTES) -> YamlTree:
    """Parse one YAML document of plain data; raise ToolError with every problem found."""
    if len(data) > max_bytes:
        raise ToolError(
            Problem(
                f"is {len(data):,} bytes, over the {max_bytes:,}-byte cap",
                where=display_path,
                remedy="a file this large is not one we expect; check what the source fetched",
            )
        )
    text = _decode(data, display_path)
    reader = _TreeBuilder(display_path)
    try:
        for event in yaml.parse(text, Loader=_EventParser):
            if not reader.take(event):
                break
    except yaml.MarkedYAMLError as error:
        reader.problems.append(_syntax_problem(error, display_path))
    except yaml.reader.ReaderError as error:
        line = text.count("\n", 0, error.position) + 1
        reader.problems.append(Problem(f"is not valid YAML: {error.reason}", where=f"{display_path}:{line}"))
    except yaml.YAMLError as error:
        reader.problems.append(Problem(f"is not valid YAML: {error}", where=display_path))
    if reader.problems:
        raise ToolError(*reader.problems)
    reader.lines.setdefault((), 1)
    return YamlTree(data=reader.root, display_path=display_path, lines=reader.lines)


class _Refused:
    """The key of a refused mapping entry: its value is read, then dropped."""


_REFUSED = _Refused()


@dataclass
class _Open:
    """A mapping or sequence whose end event has not come yet."""

    value: dict[str, Any] | list[Any]
    # None: inside something refused, so nothing below is kept or located.
    path: Segments | None
    # A mapping's key waiting for its value (None: the next node is a key).
    key: str | _Refused | None = None
    key_line: int = 0
    # A collection used as a mapping key: read through and dropped.
    is_key: bool = False


class _TreeBuilder:
    """Consumes events in order; `take` says whether reading should go on."""

    def __init__(self, display_path: str) -> None:
        self.display_path = display_path
        self.root: Any = None
        self.lines: dict[Segments, int] = {}
        self.problems: list[Problem] = []
        self._open: list[_Open] = []
        self._documents = 0
        self._mappings = 0
        self._scalars = 0

    def take(self, event: Event) -> bool:
        mark = event.start_mark  # the parser marks every event; the stubs allow None
        line = mark.line + 1 if mark is not None else 0
        if isinstance(event, DocumentStartEvent):
            self._documents += 1
            if self._documents == 2:
                self._problem("holds more than one YAML document", line)
        elif isinstance(event, NodeEvent):
            self._refuse_anchor_and_tag(event, line)
            if not self._within_counts(event, line):
                return False  # the rest of a hostile document is not worth reading
            if isinstance(event, CollectionStartEvent):
                if len(self._open) == MAX_DEPTH:
                    # Stop here: the rest of a hostile document is not worth reading.
                    self._problem(f"nests deeper than {MAX_DEPTH} levels", line)
                    return False
                self._mappings += isinstance(event, MappingStartEvent)
                if self._mappings > MAX_MAPPINGS:
                    self._problem(
                        f"holds more than {MAX_MAPPINGS:,} objects (mappings): a file this large is not one we "
                        "expect, and validating it would take minutes",
                        line,
                    )
                    return False
                self._start_collection(event, line)
            else:
                self._scalar_or_alias(event, line)
        elif isinstance(event, (MappingEndEvent, SequenceEndEvent)):
            finished = self._open.pop()
            if not finished.is_key:
                self._attach(finished.value)
        return len(self.problems) < MAX_PROBLEMS

    def _within_counts(self, event: NodeEvent, line: int) -> bool:
        """Whether the node keeps the document within MAX_SEQUENCE_ITEMS and MAX_SCALARS (else: the problem)."""
        parent = self._open[-1] if self._open else None
        if parent is not None and isinstance(parent.value, list) and len(parent.value) == MAX_SEQUENCE_ITEMS:
            shown = "" if parent.path is None else f" ({_shortened(format_pointer(parent.path)) or '/'})"
            self._problem(
                f"holds a list{shown} of more than {MAX_SEQUENCE_ITEMS:,} items: no spec needs one this long, "
                "and generating from it would take minutes",
                line,
            )
            return False
        self._scalars += isinstance(event, (ScalarEvent, AliasEvent))
        if self._scalars > MAX_SCALARS:
            self._problem(
                f"holds more than {MAX_SCALARS:,} values (scalars, keys included): a file this large is not one "
                "we expect, and generating from it would take minutes",
                line,
            )
            return False
        return True

    def _start_collection(self, event: CollectionStartEvent, line: int) -> None:
        value: dict[str, Any] | list[Any] = {} if isinstance(event, MappingStartEvent) else []
        if self._at_key():
            self._problem(f"mapping key {_kind(event)} is not a string", line)
            self._refuse_key(line)
            self._open.append(_Open(value, path=None, is_key=True))
        else:
            self._open.append(_Open(value, path=self._locate(line)))

    def _scalar_or_alias(self, event: NodeEvent, line: int) -> None:
        if isinstance(event, AliasEvent):
            self._problem(f"uses the YAML alias *{event.anchor}; aliases are refused", line)
            value: Any = None
        else:
            assert isinstance(event, ScalarEvent)
            value = self._scalar(event, line)
        if not self._at_key():
            self._locate(line)
            self._attach(value)
            return
        name = _key_text(value)
        parent = self._open[-1]
        assert isinstance(parent.value, dict)
        if name is None:
            if not isinstance(event, AliasEvent):
                self._problem(f"mapping key {value!r} is not a string", line)
            self._refuse_key(line)
        elif name in parent.value:
            first = self.lines.get((*parent.path, name)) if parent.path is not None else None
            since = f" (first on line {first})" if first is not None else ""
            self._problem(f"duplicate key {name!r}{since}", line)
            self._refuse_key(line)
        else:
            parent.key, parent.key_line = name, line

    def _at_key(self) -> bool:
        return bool(self._open) and isinstance(self._open[-1].value, dict) and self._open[-1].key is None

    def _refuse_key(self, line: int) -> None:
        self._open[-1].key, self._open[-1].key_line = _REFUSED, line

    def _locate(self, line: int) -> Segments | None:
        """The path of the value starting on `line`, noted with the line a reader looks at."""
        if not self._open:
            self.lines[()] = line
            return ()
        parent = self._open[-1]
        if parent.path is None:
            return None
        if isinstance(parent.value, list):
            path = (*parent.path, str(len(parent.value)))
        elif isinstance(parent.key, str):
            # A mapping's value is found by its key: point there.
            path, line = (*parent.path, parent.key), parent.key_line
        else:
            return None  # the value of a refused key
        self.lines[path] = line
        return path

    def _attach(self, value: Any) -> None:
        if not self._open:
            self.root = value
            return
        parent = self._open[-1]
        if isinstance(parent.value, list):
            parent.value.append(value)
            return
        if isinstance(parent.key, str):
            parent.value[parent.key] = value
        parent.key = None

    def _scalar(self, event: ScalarEvent, line: int) -> Any:
        text = event.value
        plain = event.tag is None and event.implicit[0]
        kind = None if plain else _TYPED_TAGS.get(event.tag or "")
        if not plain and kind is None:
            # Only a plain, untagged scalar is resolved: quoting or `!` makes it text, and a tag
            # outside the JSON types is refused already.
            return text if event.tag in _TEXT_TAGS else None
        try:
            value = _resolve_plain(text)
        except _HugeInteger:
            self._problem(f"holds an integer of {len(text):,} digits, more than the {MAX_INT_DIGITS:,} allowed", line)
            return None
        if kind is None:
            return value
        if kind is float and type(value) is int:
            return float(value)
        if type(value) is not kind:
            self._problem(f"tags {text!r} as {event.tag}, which it is not", line)
        return value

    def _refuse_anchor_and_tag(self, event: NodeEvent, line: int) -> None:
        if event.anchor is not None and not isinstance(event, AliasEvent):
            self._problem(f"defines the YAML anchor &{event.anchor}; anchors are refused", line)
        tag = getattr(event, "tag", None)
        if isinstance(event, MappingStartEvent):
            allowed = _MAPPING_TAGS
        elif isinstance(event, CollectionStartEvent):
            allowed = _SEQUENCE_TAGS
        else:
            allowed = _TEXT_TAGS | _TYPED_TAGS.keys()
        if tag not in allowed:
            self._problem(f"uses the YAML tag {tag}; only plain JSON types are allowed", line)

    def _problem(self, message: str, line: int) -> None:
        self.problems.append(Problem(message, where=f"{self.display_path}:{line}"))


# The first characters a typed core-schema scalar can start with; text starting otherwise is text.
_TYPED_START = frozenset("~nNtTfF0123456789+-.")


class _HugeInteger(Exception):
    """A plain scalar that is an integer of more than MAX_INT_DIGITS digits."""


def _resolve_plain(text: str) -> Any:
    if text and text[0] not in _TYPED_START:
        return text  # most scalars of a spec: names, types, descriptions
    if _NULL.fullmatch(text):
        return None
    if text in _BOOL:
        return _BOOL[text]
    for pattern, convert in _INT_BASES:
        if pattern.fullmatch(text):
            if len(text) > MAX_INT_DIGITS:
                raise _HugeInteger  # before int(), which refuses 4,300 digits in words about its own limit
            return convert(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    if infinity := _INFINITY.fullmatch(text):
        return -math.inf if infinity.group(1) == "-" else math.inf
    if _NAN.fullmatch(text):
        return math.nan
    return text


def _key_text(key: Any) -> str | None:
    # Bare status codes (`200:`) read as ints; JSON and OpenAPI see them as text.
    if isinstance(key, str):
        return key
    if isinstance(key, int) and not isinstance(key, bool):
        return str(key)
    return None


def _shortened(pointer: str, limit: int = 80) -> str:
    # A pointer is spec text: a key can be as long as the file allows.
    return pointer if len(pointer) <= limit else pointer[: limit - 3] + "..."


def _kind(event: CollectionStartEvent) -> str:
    return "a mapping" if isinstance(event, MappingStartEvent) else "a sequence"


def _decode(data: bytes, display_path: str) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise ToolError(
            Problem(f"is not UTF-8 (byte {error.start}: {error.reason})", where=f"{display_path}:{line}")
        ) from None
    return text.removeprefix("\ufeff")


def _syntax_problem(error: yaml.MarkedYAMLError, display_path: str) -> Problem:
    # The parser puts the offending spot in problem_mark and sometimes only context_mark.
    mark = error.problem_mark or error.context_mark
    where = f"{display_path}:{mark.line + 1}" if mark is not None else display_path
    summary = " ".join(part for part in (error.context, error.problem) if part)
    return Problem(f"is not valid YAML: {summary or error}", where=where)
