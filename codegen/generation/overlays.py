"""Render the hand-written overlays (templates/overlays/*.jinja) with data from the spec.

How it works, and why: docs/maintainers/design.md, "codegen/generation/overlays.py".
"""

from __future__ import annotations

import builtins
import keyword
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from codegen.generation.python_source import PythonCode, identifier_filter, python_source_environment, template_line
from codegen.generation.render_limits import RENDER_SECONDS, BoundedSandbox
from codegen.openapi.error_codes import constant_name, documented_error_codes
from codegen.openapi.operations import iter_operations, snake_case, success_statuses
from toolkit.errors import Problem, ToolError
from toolkit.paths import GENERATED_ROOTS, SYNC_TWIN_DIR, TEMPLATES
from toolkit.printable import printable


@dataclass(frozen=True)
class Overlay:
    template: str
    output: str


def load_overlays(folder: Path) -> list[Overlay]:
    index = folder / "overlays.toml"
    # The run renders from its own copy of the templates: name the file the maintainer edits.
    shown = f"{TEMPLATES}/overlays/overlays.toml"
    try:
        entries = tomllib.loads(index.read_text(encoding="utf-8"))["overlay"]
        overlays = [Overlay(e["template"], e["output"]) for e in entries]
        flavoured = [number for number, e in enumerate(entries, 1) if "flavour" in e]
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, KeyError, TypeError) as exc:
        raise ToolError(Problem(f"cannot read the overlay index: {exc}", where=shown)) from None
    outputs: set[str] = set()
    for number, overlay in enumerate(overlays, 1):
        entry = f"[[overlay]] #{number} (template {printable(repr(overlay.template))})"
        if number in flavoured:  # the SDK makes twins one way: hand-written async code, its sync twin derived
            raise ToolError(
                Problem(
                    f"{entry}: templates have no flavours",
                    where=shown,
                    remedy="write the async code by hand under e2b/sandbox_async/: codegen derives its sync twin "
                    "(codegen/generation/unasync.py)",
                )
            )
        if not isinstance(overlay.template, str):
            raise ToolError(Problem(f"{entry}: template must be a file name", where=shown))
        problem = output_problem(overlay.output)
        if problem is None and overlay.output in outputs:
            problem = "is also the output of an earlier entry"
        if problem is not None:
            raise ToolError(
                Problem(
                    f"{entry}: output {printable(repr(overlay.output))} {problem}",
                    where=shown,
                    remedy=f"give it a path inside {' or '.join(GENERATED_ROOTS)}, like the other entries",
                )
            )
        outputs.add(overlay.output)
    return overlays


def output_problem(output: object) -> str | None:
    """Why `output` is not a normalized relative path to a file inside a generated root (None: it is)."""
    if not isinstance(output, str):
        return "is not a path"
    parts = output.split("/")
    if output.startswith("/") or "\\" in output or any(part in ("", ".", "..") for part in parts):
        return "is not a normalized relative path (no leading '/', no '.', '..' or empty parts, no '\\')"
    # Git's own folder: a file written there is never shown by `git status` and may be a hook. Any
    # case, and with the trailing dots or spaces some filesystems drop (`.GIT`, `.git.`).
    if any(part.rstrip(". ").lower() == ".git" for part in parts):
        return "has a '.git' part, which names git's own folder"
    if output.startswith(SYNC_TWIN_DIR + "/"):
        return "lies in the sync twins' folder, which codegen/generation/unasync.py alone writes"
    if not any(output.startswith(root + "/") for root in GENERATED_ROOTS):
        return "lies outside the generated folders"
    return None


def operations(spec: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """operationId -> the operation, with its method and path.

    The filtered spec's operationIds are this repository's names (spec/operations.yml).
    """
    return {
        op["operationId"]: {**op, "method": method, "path": path}
        for path, method, op in iter_operations(spec)
        if "operationId" in op
    }


def request_body_schema(spec: Mapping[str, Any], operation: Mapping[str, Any]) -> str | None:
    """Name of the components/schemas entry the operation's JSON request body refers to."""
    body = operation.get("requestBody")
    for _ in range(2):  # a body may itself be a $ref to components/requestBodies
        ref = body.get("$ref") if isinstance(body, dict) else None
        if not (isinstance(ref, str) and ref.startswith("#/components/requestBodies/")):
            break
        body = spec.get("components", {}).get("requestBodies", {}).get(ref.rsplit("/", 1)[1])
    content = body.get("content") if isinstance(body, dict) else None
    media = content.get("application/json") if isinstance(content, dict) else None
    schema = media.get("schema") if isinstance(media, dict) else None
    ref = schema.get("$ref") if isinstance(schema, dict) else None
    prefix = "#/components/schemas/"
    return (
        ref[len(prefix) :]
        if isinstance(ref, str) and ref.startswith(prefix) and "/" not in ref[len(prefix) :]
        else None
    )


# A tag openapi-python-client keeps as it is for its folder name (it rewrites others: case, digits, builtins).
_PLAIN_TAG = re.compile(r"[a-z]+(?:_[a-z]+)*")
_CLIENT_PACKAGE = "e2b.api.client.api"


def client_module(operation_id: str, operation: Mapping[str, Any]) -> tuple[str, str] | None:
    """(tag folder, module) of the operation in the generated client, or None when its first tag is not plain.

    openapi-python-client files an operation under its first tag and names the module after its
    operationId, which the filtered spec's mapped operations carry as this repository's name.
    """
    tags = operation.get("tags") or ["default"]
    tag = tags[0] if isinstance(tags, list) else None
    if not isinstance(tag, str) or not _PLAIN_TAG.fullmatch(tag) or keyword.iskeyword(tag) or tag in dir(builtins):
        return None
    return tag, snake_case(operation_id)


def pascal_case(name: str) -> str:
    return name[:1].upper() + name[1:]


class _Fail(Exception):
    pass


def _environment(folder: Path) -> BoundedSandbox:
    """Spec text reaches the output only through `| py` or a name filter (codegen.generation.python_source)."""
    return python_source_environment(
        folder,
        {
            "constant_name": identifier_filter(constant_name),
            "snake_case": identifier_filter(snake_case),
            "pascal_case": identifier_filter(pascal_case),
        },
    )


def render_overlays(folder: Path, spec: Mapping[str, Any], *, seconds: float = RENDER_SECONDS) -> dict[str, bytes]:
    """Every overlay's output path -> rendered text; each template within the sandbox's bounds and `seconds`."""
    codes = documented_error_codes(spec)
    ops = operations(spec)

    def require_error_code(code: str) -> str:
        if code not in codes:
            raise _Fail(f"names error code {code!r}, which the spec does not document")
        return constant_name(code)

    def require_operation(operation_id: str) -> dict[str, Any]:
        if operation_id not in ops:
            raise _Fail(f"names operation {operation_id!r}, which spec/operations.yml does not map")
        return ops[operation_id]

    def request_model(operation_id: str) -> PythonCode:
        """The class the generators make of the operation's JSON request body schema.

        Schema names are the upstream's (this repository's spec calls the
        connect body SandboxConnectRequest, the runtime's ConnectSandbox), so
        templates ask for the class by operation rather than name it.
        """
        schema = request_body_schema(spec, require_operation(operation_id))
        if schema is None or not schema.isidentifier() or keyword.iskeyword(schema) or not schema[:1].isupper():
            raise _Fail(
                f"asks for the request body model of {operation_id!r}, whose JSON request body is not "
                "a $ref to a components/schemas entry with a PascalCase name"
            )
        return PythonCode(schema)  # checked above: a class name, nothing else

    def operation_module(operation_id: str) -> dict[str, str]:
        """Where the generated client puts the operation: `tag` (its folder), `module` and `path` (dotted)."""
        place = client_module(operation_id, require_operation(operation_id))
        if place is None:
            raise _Fail(
                f"asks for the module of {operation_id!r}, whose first tag is not a plain lower-case word "
                "(a-z and single underscores, not a Python builtin): the client generator renames such a tag"
            )
        tag, module = place
        return {
            "tag": PythonCode(tag),
            "module": PythonCode(module),
            "path": f"{_CLIENT_PACKAGE}.{tag}.{module}",  # text: rendered through `| py`
        }

    def expected_statuses(operation_id: str) -> tuple[int, ...]:
        """The 2xx statuses the spec lists for the operation: what a call expects as its answer."""
        statuses = success_statuses(require_operation(operation_id))
        if not statuses:
            raise _Fail(
                f"asks for the success statuses of {operation_id!r}, whose responses list no 2xx status "
                "(a 2XX range names none)"
            )
        return statuses

    env = _environment(folder)
    rendered: dict[str, bytes] = {}
    for overlay in load_overlays(folder):
        context = {
            "spec": spec,
            "error_codes": codes,
            "operations": ops,
            # No runtime commit: provenance is the lock's and the manifest's, so a bump rewrites only what changed.
            "require_error_code": require_error_code,
            "require_operation": require_operation,
            "request_model": request_model,
            "operation_module": operation_module,
            "success_statuses": expected_statuses,
            "request_body_schema": lambda operation: request_body_schema(spec, operation),
        }
        try:
            text = env.render_bounded(overlay.template, context, seconds=seconds)
        except _Fail as exc:
            raise ToolError(Problem(str(exc), where=f"{TEMPLATES}/overlays/{overlay.template}")) from None
        except jinja2.TemplateError as exc:
            raise ToolError(Problem(f"cannot render: {exc}", where=_where(exc, overlay.template))) from None
        except ToolError:
            raise
        except Exception as exc:  # whatever a template raises is the template's fault
            # What the sandbox's bounds did not foresee (a float past its range, a macro calling itself,
            # `1 // 0`, a bad filter argument): one line and exit 2, not Python's traceback and a "drift".
            said = str(exc).split("\n", 1)[0][:200]
            message = f"cannot render: {type(exc).__name__}" + (f": {said}" if said else "")
            raise ToolError(Problem(message, where=_where(exc, overlay.template))) from None
        rendered[overlay.output] = text.encode()
    return rendered


def _where(error: BaseException, template: str) -> str:
    """The template's file, with the line that was rendering when `error` was raised, when known."""
    line = getattr(error, "lineno", None) or template_line(error, template)
    return f"{TEMPLATES}/overlays/{template}" + (f":{line}" if line else "")
