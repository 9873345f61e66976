"""Turn the spec's bytes into a validated OpenAPI document, refusing anything that could hurt us.

The spec comes from another repository, so it is treated as untrusted input:
every refusal below happens before the expensive or dangerous step it guards
(size, anchors, depth and object count while reading, in `plain_yaml`;
non-local `$ref`s before the validator, which would otherwise read files and
fetch URLs; reference chains and how far the schemas unfold before any walk
of them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn
from urllib.parse import unquote

from codegen.openapi.json_pointer import Segments, format_pointer, resolve_pointer
from codegen.openapi.plain_yaml import MAX_PROBLEMS, YamlTree, load_yaml
from codegen.openapi.ref_chains import MAX_HOPS, RefChains
from codegen.openapi.schema_places import first_overflow, too_tangled
from toolkit.errors import Problem, ToolError
from toolkit.paths import SPEC

# Keys whose string value the validator's resolver dereferences.  `$id`
# changes the base URI, so even a "#/..." ref under it would resolve remotely.
_REF_KEYS = ("$ref", "$dynamicRef", "$recursiveRef")
_BASE_URI_KEYS = ("$id",)


@dataclass(frozen=True)
class SpecDocument:
    """A parsed OpenAPI 3 spec that only refers to itself (validated, unless it came from `read_spec`)."""

    raw: bytes = field(repr=False)
    data: dict[str, Any] = field(repr=False)
    display_path: str
    _tree: YamlTree = field(repr=False, compare=False)

    def line_of(self, pointer: str) -> int | None:
        return self._tree.line_of(pointer)

    def where(self, pointer: str) -> str:
        return self._tree.where(pointer)


def load_spec(data: bytes, *, display_path: str = SPEC) -> SpecDocument:
    """Parse and validate the spec; raise ToolError with every problem found."""
    document = read_spec(data, display_path=display_path)
    _raise_if(validation_problems(document))
    return document


def read_spec(data: bytes, *, display_path: str = SPEC) -> SpecDocument:
    """`load_spec` up to the validator: plain data, OpenAPI 3, references local, present and short.

    Short: no cycle of aliases, no chain of more than MAX_HOPS (codegen/openapi/ref_chains.py);
    and the schemas below the operations do not unfold past a budget
    (codegen/openapi/schema_places.py), so that no later walk of them can hang.

    What is left, `validation_problems`, can then run on the document safely,
    and at any time: the pipeline runs it alongside the generators.
    """
    tree = load_yaml(data, display_path=display_path)
    spec = _require_openapi3(tree)
    _raise_if(_reference_problems(tree))
    tangled = first_overflow(spec)  # before anything walks the schemas below the operations
    if tangled is not None:
        _, path, method = tangled
        _fail(Problem(too_tangled(f"{method.upper()} {path}"), where=tree.where(tangled)))
    return SpecDocument(raw=data, data=spec, display_path=display_path, _tree=tree)


def validation_problems(document: SpecDocument) -> list[Problem]:
    """What openapi-spec-validator finds in a document from `read_spec`."""
    return validate_openapi(document.data, where=document.where)


def validate_openapi(
    spec: Mapping[str, Any], *, where: Callable[[str], str] = lambda pointer: pointer or "/"
) -> list[Problem]:
    """OpenAPI 3 validation that can never read a file or open a connection."""
    # Imported here, not with the module: the validator's dependencies take
    # a second or more to import, and the pipeline pays that in its
    # validation thread, beside the generators (pipeline.validated_alongside).
    from jsonschema_path import SchemaPath
    from openapi_spec_validator.shortcuts import get_validator_cls

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
    """Every reference must point inside this document, at something that exists, through a short chain."""
    problems: list[Problem] = []
    chains = RefChains(tree.data)
    said: set[object] = set()  # each cycle and each overlong chain once, whichever reference reached it first
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
        else:
            lead = chains.lead(value)
            if lead.cycle and lead.cycle not in said:
                said.add(lead.cycle)
                problems.append(
                    Problem(
                        f"{key} {value!r} is a cycle of references that never reaches a schema ({lead.cycle_text()})",
                        where=where,
                    )
                )
            elif lead.hops > MAX_HOPS and lead.end not in said:
                said.add(lead.end)
                problems.append(
                    Problem(
                        f"{key} {value!r} starts a chain of {lead.hops:,} references to references before "
                        f"{lead.end!r}, more than the {MAX_HOPS} a spec may chain",
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


def _first_line(message: str) -> str:
    return message.strip().split("\n", 1)[0]


def _raise_if(problems: list[Problem]) -> None:
    if problems:
        raise ToolError(*problems)


def _fail(problem: Problem) -> NoReturn:
    raise ToolError(problem)
