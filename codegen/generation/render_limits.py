"""Jinja's immutable sandbox with bounds on what a template can make large: loops, values, output, time.

How it works, and why: docs/maintainers/design.md, "codegen/generation/render_limits.py".
"""

from __future__ import annotations

import functools
import re
import string
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import generate_lorem_ipsum
from jinja2.visitor import NodeTransformer

# The overlays loop over the spec's error codes and operations (tens), each list at most 2,000 long
# (codegen/openapi/plain_yaml.py): these leave room for far more, and stop a hostile template in a second.
MAX_RANGE = 10_000  # items of one range()
MAX_ITERATIONS = 1_000_000  # loop iterations in one template, all loops together
MAX_VALUE = 1_000_000  # characters or items of one value a template makes (`*`, `+`, `~`, a filter, a call)
MAX_OUTPUT = 2_000_000  # characters one template produces, in `{% set %}` blocks and macros too (an overlay: 21,000)
MAX_INT_BITS = 4_096  # bits of an integer a template makes (`*`, `**`)
RENDER_SECONDS = 10.0  # each template's wall-clock limit (one renders in milliseconds)

# Filter names no template can spell (they have a space): only the parser hook below applies them.
_COUNTED = "counted loop"
_BOUNDED = "bounded value"
_PRODUCED = "produced output"
_PRODUCED_TEXT = "produced template text"


class RenderLimitExceeded(jinja2.TemplateRuntimeError):
    """A template asked for more than a bound allows; said with the bound, and the template's line by the caller."""


class _Budget:
    """What one rendering has spent (loop iterations, characters of output), and its deadline."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds
        self.iterations = 0
        self.produced = 0

    def check_time(self) -> None:
        if time.monotonic() >= self.deadline:
            raise RenderLimitExceeded(f"rendering ran past its {self.seconds:g} s limit")

    def step(self) -> None:
        self.iterations += 1
        if self.iterations > MAX_ITERATIONS:
            raise RenderLimitExceeded(f"loops ran more than {MAX_ITERATIONS:,} times in one template")
        if not self.iterations % 1024:  # the clock costs more than the count
            self.check_time()

    def produce(self, characters: int) -> None:
        self.produced += characters
        if self.produced > MAX_OUTPUT:
            raise RenderLimitExceeded(f"the output passed {MAX_OUTPUT:,} characters")


def _size(value: object) -> int:
    """The characters or items of a text or collection (0 for anything else)."""
    if isinstance(value, str | bytes | list | tuple | dict | set | frozenset):
        return len(value)
    return 0


def _bounded(value: Any, what: str) -> Any:
    """`value`, when it is within MAX_VALUE (and an integer within MAX_INT_BITS)."""
    if _size(value) > MAX_VALUE:
        raise RenderLimitExceeded(f"{what} made a value of {_size(value):,} items, over the {MAX_VALUE:,} allowed")
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise RenderLimitExceeded(f"{what} made an integer of over {MAX_INT_BITS:,} bits")
    return value


def _refuse_large_operands(op: str, left: Any, right: Any) -> None:
    """Before `*`, `**` or `+` is computed: refuse one whose result would be past a bound (it may not fit in memory)."""
    ints = [isinstance(side, int) for side in (left, right)]
    if op == "*" and ints[0] != ints[1]:  # a sequence repeated
        count, sequence = (left, right) if ints[0] else (right, left)
        made = max(count, 0) * _size(sequence)
        if made > MAX_VALUE:
            raise RenderLimitExceeded(f"'*' would make {made:,} items, over the {MAX_VALUE:,} allowed")
    elif op == "*" and all(ints) and left.bit_length() + right.bit_length() > MAX_INT_BITS:
        raise RenderLimitExceeded(f"'*' would make an integer of over {MAX_INT_BITS:,} bits")
    elif op == "**" and all(ints) and right > 0 and abs(left) > 1:
        if right > MAX_INT_BITS or (abs(left).bit_length() - 1) * right > MAX_INT_BITS:
            raise RenderLimitExceeded(f"'**' would make an integer of over {MAX_INT_BITS:,} bits")
    elif op == "+" and _size(left) + _size(right) > MAX_VALUE:
        raise RenderLimitExceeded(
            f"'+' would make {_size(left) + _size(right):,} items, over the {MAX_VALUE:,} allowed"
        )


# A `%` conversion's width and precision, each digits or `*` (taken from the arguments).
_PERCENT_SPEC = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?")


def _refuse_wide(width: int) -> None:
    if width > MAX_RANGE:
        raise RenderLimitExceeded(f"a format's width or precision of {width:,} is over the {MAX_RANGE:,} allowed")


def _refuse_wide_arguments(arguments: Iterable[Any]) -> None:
    for value in arguments:
        if isinstance(value, int) and not isinstance(value, bool):
            _refuse_wide(abs(value))


def _refuse_wide_percent(text: str, right: Any) -> None:
    """Before `text % right`: a width Python would fill (`'%0999999999d'`) is refused, not allocated."""
    for spec in _PERCENT_SPEC.finditer(text):
        for part in spec.groups():
            if part == "*":
                _refuse_wide_arguments(right if isinstance(right, tuple) else (right,))
            elif part is not None:
                _refuse_wide(int(part))


def _refuse_wide_format(text: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
    """Before `text.format(...)`: the same for `{:>999999999}`, and for a width given as a field of its own."""
    for _, _, spec, _ in string.Formatter().parse(text):
        if not spec:
            continue
        for digits in re.findall(r"\d+", spec):
            _refuse_wide(int(digits))
        if "{" in spec:
            _refuse_wide_arguments((*args, *kwargs.values()))


class _CountLoopsAndConcatenations(NodeTransformer):
    """Every `{% for %}`'s iterable counted against the budget; every `~` bounded in size; all output counted.

    Output is counted where it is made, not where it leaves the template: a `{% set %}` block or a
    macro buffers what it makes, and a loop could fill a buffer past any memory before it left.
    """

    def visit_Output(self, node: nodes.Output) -> list[nodes.Node]:
        self.generic_visit(node)
        static = sum(len(child.data) for child in node.nodes if isinstance(child, nodes.TemplateData))
        node.nodes = [
            child
            if isinstance(child, nodes.TemplateData)
            else nodes.Filter(child, _PRODUCED, [], [], None, None, lineno=child.lineno)
            for child in node.nodes
        ]
        count = nodes.ExprStmt(
            nodes.Filter(nodes.Const(static), _PRODUCED_TEXT, [], [], None, None), lineno=node.lineno
        )
        return [count, node]

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        node.iter = nodes.Filter(node.iter, _COUNTED, [], [], None, None, lineno=node.lineno)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        return nodes.Filter(node, _BOUNDED, [], [], None, None, lineno=node.lineno)


class BoundedSandbox(ImmutableSandboxedEnvironment):
    """Jinja's immutable sandbox; render with `render_bounded`, which gives each template a budget."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.budget = _Budget(RENDER_SECONDS)
        self.globals["range"] = self._range
        self.globals["lipsum"] = _lipsum
        # Every built-in filter: no integer argument past MAX_RANGE (a width, a count), no result past MAX_VALUE.
        self.filters = {name: _bounded_filter(name, function) for name, function in self.filters.items()}
        self.filters[_COUNTED] = jinja2.pass_environment(_counted)
        self.filters[_BOUNDED] = functools.partial(_bounded, what="'~'")
        self.filters[_PRODUCED] = jinja2.pass_environment(_produced)
        self.filters[_PRODUCED_TEXT] = jinja2.pass_environment(_produced_text)

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        template = _CountLoopsAndConcatenations().visit(super()._parse(source, name, filename))
        assert isinstance(template, nodes.Template)
        return template

    def _range(self, *args: int) -> range:
        made = range(*args)
        if len(made) > MAX_RANGE:
            raise RenderLimitExceeded(
                f"range() of {len(made):,} items is over the {MAX_RANGE:,} a template may ask for"
            )
        return made

    def call_binop(self, context: jinja2.runtime.Context, operator: str, left: Any, right: Any) -> Any:
        _refuse_large_operands(operator, left, right)
        if operator == "%" and isinstance(left, str):
            _refuse_wide_percent(left, right)
        return _bounded(super().call_binop(context, operator, left, right), f"'{operator}'")

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        """jinja's sandboxed `str.format` and `format_map`, refusing a width past MAX_RANGE before it is filled."""
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None
        text, is_map = value.__self__, value.__name__ == "format_map"

        def checked(*args: Any, **kwargs: Any) -> str:
            fields = args[0] if is_map and len(args) == 1 and isinstance(args[0], Mapping) else kwargs
            _refuse_wide_format(text, () if is_map else args, fields)
            return wrapped(*args, **kwargs)

        return functools.update_wrapper(checked, value)

    def call(__self, __context: jinja2.runtime.Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        __self.budget.check_time()  # a macro that calls itself, or another, runs no loop
        return _bounded(super().call(__context, __obj, *args, **kwargs), "a call")

    def render_bounded(self, name: str, context: Mapping[str, Any], *, seconds: float = RENDER_SECONDS) -> str:
        """Template `name` rendered within the bounds, with `seconds` of wall-clock time."""
        template = self.get_template(name)
        self.budget = _Budget(seconds)
        return template.render(context)


def _lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:  # jinja's names
    """Jinja's `lipsum`, which would write paragraphs by the million on request: at most 100 of 1,000 words."""
    if n > 100 or max > 1_000:
        raise RenderLimitExceeded("lipsum() may make at most 100 paragraphs of at most 1,000 words")
    return str(generate_lorem_ipsum(n, html, min, max))


def _produced(environment: BoundedSandbox, value: Any) -> Any:
    """`value`, as it is; the characters it makes are counted."""
    environment.budget.produce(len(str(value)))
    return value


def _produced_text(environment: BoundedSandbox, characters: int) -> None:
    """The characters of the template's own text in one output, counted; the clock looked at."""
    environment.budget.produce(characters)
    environment.budget.check_time()


def _counted(environment: BoundedSandbox, iterable: Iterable[Any]) -> Iterator[Any]:
    budget = environment.budget
    for item in iterable:
        budget.step()
        yield item


def _bounded_filter(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    # The filtered value is not an argument (`{{ 123456 | string }}`), nor the context jinja may pass first.
    skip = 2 if getattr(function, "jinja_pass_arg", None) is not None else 1

    @functools.wraps(function)  # keeps jinja's pass_context/pass_environment marks
    def bounded(*args: Any, **kwargs: Any) -> Any:
        for value in (*args[skip:], *kwargs.values()):
            if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_RANGE:
                raise RenderLimitExceeded(
                    f"filter {name!r} was given {value:,}, over the {MAX_RANGE:,} a filter may take"
                )
        return _bounded(function(*args, **kwargs), f"filter {name!r}")

    return bounded
