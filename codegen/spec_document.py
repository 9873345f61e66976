"""Turn the spec's bytes into plain data, refusing anything that could hurt us.

The spec comes from another repository, so it is treated as untrusted input:
every refusal below happens before the expensive or dangerous step it guards
(size before parsing, anchors and depth before building nodes, non-local
`$ref`s before the validator, which would otherwise read files and fetch URLs).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn
from urllib.parse import unquote

from jsonschema_path import SchemaPath
from openapi_spec_validator.shortcuts import get_validator_cls
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import (
    AliasEvent,
    CollectionEndEvent,
    CollectionStartEvent,
    DocumentStartEvent,
    Event,
    NodeEvent,
)

from codegen.config import SPEC
from codegen.errors import CodegenError, Problem
from codegen.json_pointer import Segments, format_pointer, parse_pointer, resolve_pointer

MAX_SPEC_BYTES = 5 * 1024 * 1024
# Real specs nest a dozen levels; 64 leaves room while keeping every later
# recursive walk (conversion, validator, filter) far from Python's stack limit.
MAX_DEPTH = 64
# Past this many, more messages bury the first ones rather than help.
MAX_PROBLEMS = 20

# Explicit tags beyond the plain JSON types would smuggle in Python-level
# types (sets, binary, ordered maps) that no later stage expects.
_ALLOWED_TAGS = frozenset(f"tag:yaml.org,2002:{name}" for name in ("str", "int", "float", "bool", "null", "map", "seq"))
# Keys whose string value the validator's resolver dereferences.  `$id`
# changes the base URI, so even a "#/..." ref under it would resolve remotely.
_REF_KEYS = ("$ref", "$dynamicRef", "$recursiveRef")
_BASE_URI_KEYS = ("$id",)


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


@dataclass(frozen=True)
class SpecDocument:
    """A parsed, validated OpenAPI 3 spec that only refers to itself."""

    raw: bytes = field(repr=False)
    data: dict[str, Any] = field(repr=False)
    display_path: str
    _tree: YamlTree = field(repr=False, compare=False)

    def line_of(self, pointer: str) -> int | None:
        return self._tree.line_of(pointer)

    def where(self, pointer: str) -> str:
        return self._tree.where(pointer)


def load_spec(data: bytes, *, display_path: str = SPEC) -> SpecDocument:
    """Parse and validate the spec; raise CodegenError with every problem found."""
    tree = load_yaml(data, display_path=display_path)
    spec = _require_openapi3(tree)
    _raise_if(_reference_problems(tree))
    _raise_if(validate_openapi(spec, where=tree.where))
    return SpecDocument(raw=data, data=spec, display_path=display_path, _tree=tree)


def load_yaml(data: bytes, *, display_path: str, max_bytes: int = MAX_SPEC_BYTES) -> YamlTree:
    """Parse one YAML document of plain data; no anchors, tags, or deep nesting."""
    if len(data) > max_bytes:
        _fail(
            Problem(
                f"is {len(data):,} bytes, over the {max_bytes:,}-byte cap",
                where=display_path,
                remedy="a spec this large is not one we expect; check what the source fetched",
            )
        )
    text = _decode(data, display_path)
    _raise_if(_event_problems(text, display_path))
    root = _compose(text, display_path)
    lines: dict[Segments, int] = {}
    problems: list[Problem] = []
    plain = _to_plain(root, (), _node_line(root, fallback=1), lines, problems, display_path)
    _raise_if(problems)
    return YamlTree(data=plain, display_path=display_path, lines=lines)


def validate_openapi(
    spec: Mapping[str, Any], *, where: Callable[[str], str] = lambda pointer: pointer or "/"
) -> list[Problem]:
    """OpenAPI 3 validation that can never read a file or open a connection."""
    try:
        validator_cls = get_validator_cls(spec)
    except Exception as error:  # the library's "which version?" errors have no common base
        return [Problem(f"not an OpenAPI 3 document: {error}", where=where(""))]
    # handlers decide how each URI scheme is fetched; unknown schemes fall back
    # to urlopen, hence a mapping that claims every scheme and refuses it.
    schema_path = SchemaPath.from_dict(spec, base_uri="", handlers=_RefuseEveryScheme())
    problems: list[Problem] = []
    try:
        for invalid in validator_cls(schema_path).iter_errors():
            pointer = format_pointer(invalid.absolute_path)
            if not pointer and invalid.instance is not spec:
                # The default-value check reports its errors at the root; name the default itself.
                pointer = _default_pointer(spec, invalid.instance) or pointer
            problems.append(Problem(_first_line(invalid.message), where=where(pointer)))
            if len(problems) == MAX_PROBLEMS:
                problems.append(Problem(f"stopped after {MAX_PROBLEMS} validation errors"))
                break
    except Exception as error:
        # The validator's second pass assumes what its first pass checked and
        # crashes (KeyError and the like) on a spec that failed it: the errors
        # already found say what is wrong.  A refused fetch is always said.
        refusal = _refusal_in(error)
        if refusal is not None:
            problems.append(Problem(f"validation stopped: {refusal}"))
        elif isinstance(error, RecursionError) and not problems:
            problems.append(
                Problem("the validator could not follow the references: they nest without end", where=where(""))
            )
        elif not problems:
            problems.append(Problem(f"the validator failed: {type(error).__name__}: {_first_line(str(error))}"))
    return problems


def _default_pointer(node: Any, value: Any, path: Segments = ()) -> str | None:
    """The first `default` whose value is `value` (same type: YAML's `0` is not `false`)."""
    if isinstance(node, dict):
        for key, child in node.items():
            if key == "default" and type(child) is type(value) and child == value:
                return format_pointer((*path, key))
            found = _default_pointer(child, value, (*path, key))
            if found is not None:
                return found
    elif isinstance(node, list):
        for index, item in enumerate(node):
            found = _default_pointer(item, value, (*path, str(index)))
            if found is not None:
                return found
    return None


def _refusal_in(error: BaseException) -> ExternalReferenceRefused | None:
    """Our refusal, however deep the resolver libraries wrapped it."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, ExternalReferenceRefused):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


class ExternalReferenceRefused(Exception):
    """Raised inside the validator's resolver instead of fetching anything."""


class _RefuseEveryScheme(Mapping[str, Callable[[str], NoReturn]]):
    def __contains__(self, scheme: object) -> bool:
        return True

    def __getitem__(self, scheme: str) -> Callable[[str], NoReturn]:
        return _refuse

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def _refuse(uri: str) -> NoReturn:
    raise ExternalReferenceRefused(f"refused to fetch {uri!r}: only local '#/...' references")


def _decode(data: bytes, display_path: str) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        _fail(
            Problem(
                f"is not UTF-8 (byte {error.start}: {error.reason})",
                where=f"{display_path}:{line}",
            )
        )
    return text.removeprefix("\ufeff")


def _event_problems(text: str, display_path: str) -> list[Problem]:
    """Refuse anchors, aliases, odd tags and deep nesting from the event stream.

    Events are produced by an iterative state machine and never expand an
    alias, so this pass costs the same for a billion-laughs document as for
    any other of its size, and cannot hit the recursion limit.
    """
    problems: list[Problem] = []
    depth = documents = 0
    try:
        # The safe scanner: the same events and marks, without the round-trip
        # scanner's comment gathering (about 40% of this pass on a large spec).
        for event in YAML(typ="safe", pure=True).parse(text):
            where = f"{display_path}:{event.start_mark.line + 1}"
            if isinstance(event, DocumentStartEvent):
                documents += 1
                if documents == 2:
                    problems.append(Problem("holds more than one YAML document", where=where))
            problems.extend(_node_event_problems(event, where))
            if isinstance(event, CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    # Stop here: the rest of a hostile document is not worth reading.
                    problems.append(Problem(f"nests deeper than {MAX_DEPTH} levels", where=where))
                    break
            elif isinstance(event, CollectionEndEvent):
                depth -= 1
            if len(problems) >= MAX_PROBLEMS:
                break
    except MarkedYAMLError as error:
        problems.append(_yaml_error_problem(error, display_path))
    except (YAMLError, RecursionError) as error:
        problems.append(Problem(f"is not valid YAML: {error}", where=display_path))
    return problems


def _node_event_problems(event: Event, where: str) -> list[Problem]:
    if isinstance(event, AliasEvent):
        return [Problem(f"uses the YAML alias *{event.anchor}; aliases are refused", where=where)]
    if not isinstance(event, NodeEvent):
        return []
    problems = []
    if event.anchor is not None:
        problems.append(Problem(f"defines the YAML anchor &{event.anchor}; anchors are refused", where=where))
    tag = getattr(event, "tag", None)
    if tag is not None and tag not in _ALLOWED_TAGS:
        problems.append(Problem(f"uses the YAML tag {tag}; only plain JSON types are allowed", where=where))
    return problems


def _compose(text: str, display_path: str) -> Any:
    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    try:
        return yaml.load(text)
    except MarkedYAMLError as error:
        _fail(_yaml_error_problem(error, display_path))
    except YAMLError as error:
        _fail(Problem(f"is not valid YAML: {error}", where=display_path))


def _yaml_error_problem(error: MarkedYAMLError, display_path: str) -> Problem:
    # ruamel puts the offending spot in problem_mark and sometimes only context_mark.
    mark = error.problem_mark or error.context_mark
    where = f"{display_path}:{mark.line + 1}" if mark is not None else display_path
    summary = " ".join(part for part in (error.context, error.problem) if part)
    return Problem(f"is not valid YAML: {summary or error}", where=where)


def _to_plain(
    node: Any,
    path: Segments,
    line: int,
    lines: dict[Segments, int],
    problems: list[Problem],
    display_path: str,
) -> Any:
    """Copy ruamel's nodes into dicts/lists/scalars, noting each node's line."""
    lines[path] = line
    if isinstance(node, CommentedMap):
        return _map_to_plain(node, path, lines, problems, display_path)
    if isinstance(node, CommentedSeq):
        return [
            _to_plain(item, (*path, str(index)), node.lc.item(index)[0] + 1, lines, problems, display_path)
            for index, item in enumerate(node)
        ]
    return _scalar_to_plain(node, line, problems, display_path)


def _map_to_plain(
    node: CommentedMap,
    path: Segments,
    lines: dict[Segments, int],
    problems: list[Problem],
    display_path: str,
) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in node.items():
        key_line = node.lc.key(key)[0] + 1
        name = _key_text(key)
        if name is None or name in result:
            why = "is not a string" if name is None else "repeats an earlier key once read as text"
            problems.append(Problem(f"mapping key {key!r} {why}", where=f"{display_path}:{key_line}"))
            continue
        result[name] = _to_plain(value, (*path, name), key_line, lines, problems, display_path)
    return result


def _key_text(key: object) -> str | None:
    # Bare status codes (`200:`) load as ints; JSON and OpenAPI see them as text.
    if isinstance(key, str):
        return str(key)
    if isinstance(key, int) and not isinstance(key, bool):
        return str(int(key))
    return None


def _scalar_to_plain(node: Any, line: int, problems: list[Problem], display_path: str) -> Any:
    # Order matters: bool is an int, and ruamel's scalar types subclass the builtins.
    if node is None or isinstance(node, bool):
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, str):
        return str(node)
    if isinstance(node, datetime.date):
        # JSON has no dates; an unquoted date is text to every OpenAPI consumer.
        return node.isoformat()
    problems.append(Problem(f"holds a {type(node).__name__}, not plain data", where=f"{display_path}:{line}"))
    return None


def _node_line(node: Any, *, fallback: int) -> int:
    lc = getattr(node, "lc", None)
    return lc.line + 1 if lc is not None and lc.line is not None else fallback


def _require_openapi3(tree: YamlTree) -> dict[str, Any]:
    data = tree.data
    version = data.get("openapi") if isinstance(data, dict) else None
    if not isinstance(version, str) or not version.startswith("3."):
        found = "top level is not a mapping" if not isinstance(data, dict) else f"openapi: {version!r}"
        pointer = "/openapi" if isinstance(data, dict) else ""
        _fail(Problem(f"not an OpenAPI 3 document ({found})", where=tree.where(pointer)))
    assert isinstance(data, dict)  # narrowed above; mypy cannot see through _fail
    return data


def _reference_problems(tree: YamlTree) -> list[Problem]:
    """Every reference must point inside this document, at something that exists."""
    problems: list[Problem] = []
    for path, key, value in _iter_ref_values(tree.data, ()):
        where = tree.where((*path, key))
        if key in _BASE_URI_KEYS:
            problems.append(Problem(f"{key} {value!r} would change where references resolve; refused", where=where))
        elif not value.startswith("#"):
            problems.append(
                Problem(
                    f"{key} {value!r} is not local; only '#/...' references are allowed, "
                    "nothing outside the spec is read or fetched",
                    where=where,
                )
            )
        elif not _local_target_exists(tree.data, value):
            problems.append(Problem(f"{key} {value!r} points at nothing in this spec", where=where))
        elif (cycle := _alias_cycle(tree.data, value)) is not None:
            problems.append(
                Problem(
                    f"{key} {value!r} is a cycle of references that never reaches a schema ({' -> '.join(cycle)})",
                    where=where,
                )
            )
    if len(problems) > MAX_PROBLEMS:
        extra = len(problems) - MAX_PROBLEMS
        return [*problems[:MAX_PROBLEMS], Problem(f"and {extra} more reference problems")]
    return problems


def _iter_ref_values(node: Any, path: Segments) -> Iterator[tuple[Segments, str, str]]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in _REF_KEYS + _BASE_URI_KEYS and isinstance(value, str):
                yield path, key, value
            else:
                yield from _iter_ref_values(value, (*path, key))
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from _iter_ref_values(item, (*path, str(index)))


def _local_target_exists(data: Any, ref: str) -> bool:
    try:
        # The fragment is a URI part, so "%25"-style escapes come off first.
        found, _ = resolve_pointer(data, unquote(ref[1:]))
    except ValueError:
        return False
    return found


def _alias_cycle(data: Any, ref: str) -> list[str] | None:
    """The chain when `ref` leads to a node that is only another `$ref`, and so on back to itself.

    A schema that refers to itself through a property is fine; one that *is*
    a reference to itself resolves to nothing and sends the validator into
    unbounded recursion.
    """
    chain = [ref]
    while True:
        try:
            found, node = resolve_pointer(data, unquote(chain[-1][1:]))
        except ValueError:
            return None
        target = node.get("$ref") if found and isinstance(node, dict) else None
        if not isinstance(target, str) or not target.startswith("#"):
            return None
        if target in chain:
            return [*chain[chain.index(target) :], target]
        chain.append(target)


def _first_line(message: str) -> str:
    return message.strip().split("\n", 1)[0]


def _raise_if(problems: list[Problem]) -> None:
    if problems:
        raise CodegenError(*problems)


def _fail(problem: Problem) -> NoReturn:
    raise CodegenError(problem)
