"""The jinja environment for templates that render Python: spec text can only become a literal.

How it works, and why: docs/maintainers/design.md, "codegen/generation/python_source.py".
"""

from __future__ import annotations

import keyword
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.visitor import NodeTransformer

from codegen.generation.render_limits import BoundedSandbox

# A filter name no template can spell (it has a space), so that only the
# parser hook below can mark text as the template's own.
_TEMPLATE_TEXT = "template text"


class PythonCode(str):
    """Text that is Python source by construction (see the module docstring)."""


class UnescapedText(jinja2.TemplateRuntimeError):
    """A `{{ }}` rendered a value that did not go through an escaping filter."""


def py_literal(value: object, docstring: bool = False) -> PythonCode:
    """A Python literal that evaluates to `value` (str, int, bool, None, finite float, list, dict).

    `docstring=True` writes a string in triple quotes, also on one line.
    """
    if value is None or isinstance(value, bool | int):
        return PythonCode(repr(value))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise UnescapedText(f"{value!r} has no Python literal")
        return PythonCode(repr(value))
    if isinstance(value, str):
        return PythonCode(_string_literal(value, triple=docstring))
    if isinstance(value, list | tuple):
        return PythonCode("[" + ", ".join(py_literal(item) for item in value) + "]")
    if isinstance(value, Mapping):
        return PythonCode("{" + ", ".join(f"{py_literal(k)}: {py_literal(v)}" for k, v in value.items()) + "}")
    raise UnescapedText(f"a {type(value).__name__} has no Python literal")


def _string_literal(text: str, *, triple: bool) -> str:
    """Double quotes, triple when asked or when the text has line breaks (docstrings stay readable).

    Every backslash and quote is escaped, and so is every character that is not
    printable (a newline too, in the one-line form), so the text can neither end
    the literal nor start a new line of code.
    """
    multiline = "\n" in text
    triple = triple or multiline
    out = []
    for char in text:
        if char == "\\":
            out.append("\\\\")
        elif char == '"':
            out.append('\\"')
        elif char == "\n" and multiline:
            out.append("\n")
        elif char.isprintable():
            out.append(char)
        else:
            code = ord(char)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    quote = '"""' if triple else '"'
    return quote + "".join(out) + quote


def identifier_filter(make_name: Callable[[str], str]) -> Callable[[object], PythonCode]:
    """A filter that derives a Python name from spec text, refusing anything that is not one."""

    def name(value: object) -> PythonCode:
        made = make_name(str(value))
        if not made.isidentifier() or keyword.iskeyword(made):
            raise UnescapedText(f"{value!r} does not make a Python name ({made!r}); refused")
        return PythonCode(made)

    name.__name__ = make_name.__name__
    return name


def _finalize(value: object) -> object:
    if isinstance(value, PythonCode) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    if isinstance(value, jinja2.Undefined):
        str(value)  # StrictUndefined raises its own error: "'name' is undefined"
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    raise UnescapedText(f"renders {shown} as it is: pass spec text through `| py` (a Python literal) or a name filter")


class _MarkTemplateText(NodeTransformer):
    """Wrap the template's own string constants and `{% set %}` blocks in the template-text filter."""

    def visit_Const(self, node: nodes.Const) -> nodes.Node:
        if isinstance(node.value, str):
            return nodes.Filter(node, _TEMPLATE_TEXT, [], [], None, None, lineno=node.lineno)
        return node

    def visit_AssignBlock(self, node: nodes.AssignBlock) -> nodes.Node:
        self.generic_visit(node)
        if node.filter is None:
            node.filter = nodes.Filter(None, _TEMPLATE_TEXT, [], [], None, None, lineno=node.lineno)
        return node


class _PythonSourceEnvironment(BoundedSandbox):
    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        template = _MarkTemplateText().visit(super()._parse(source, name, filename))
        assert isinstance(template, nodes.Template)
        template.set_environment(self)
        return template


def python_source_environment(folder: Path, filters: Mapping[str, Callable[..., Any]]) -> BoundedSandbox:
    """The environment for templates under `folder`; `filters` must return `PythonCode` to be rendered."""
    env = _PythonSourceEnvironment(
        loader=jinja2.FileSystemLoader(folder),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
        finalize=_finalize,
        # Folding constants at compile time would turn marked template text back into plain str.
        optimized=False,
    )
    env.filters.update(filters)
    env.filters.update({"py": py_literal, _TEMPLATE_TEXT: PythonCode})
    return env


def template_line(error: BaseException, template: str) -> int | None:
    """The line of `template` that was rendering when `error` was raised (jinja rewrites tracebacks so)."""
    line = None
    tb = error.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.endswith(template):
            line = tb.tb_lineno
        tb = tb.tb_next
    return line
