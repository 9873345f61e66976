"""Jinja's immutable sandbox with bounds on what a template can make large: loops, values, output, time.

How it works, and why: docs/maintainers/design.md, "codegen/generation/render_limits.py".
"""

from __future__ import annotations

import functools
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
MAX_OUTPUT = 2_000_000  # characters one template renders (the largest overlay renders 21,000)
MAX_INT_BITS = 4_096  # bits of an integer a template makes (`*`, `**`)
RENDER_SECONDS = 10.0  # each template's wall-clock limit (one renders in milliseconds)

# Filter names no template can spell (they have a space): only the parser hook below applies them.
_COUNTED = "counted loop"
_BOUNDED = "bounded value"


class RenderLimitExceeded(jinja2.TemplateRuntimeError):
    """A template asked for more than a bound allows; said with the bound, and the template's line by the caller."""

    lineno: int | None = None  # set when raised outside the template's code (its traceback has no line of it)


class _Budget:
    """What one rendering has spent: loop iterations, against its deadline."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds
        self.iterations = 0

    def check_time(self) -> None:
        if time.monotonic() >= self.deadline:
            raise RenderLimitExceeded(f"rendering ran past its {self.seconds:g} s limit")

    def step(self) -> None:
        self.iterations += 1
        if self.iterations > MAX_ITERATIONS:
            raise RenderLimitExceeded(f"loops ran more than {MAX_ITERATIONS:,} times in one template")
        if not self.iterations % 1024:  # the clock costs more than the count
            self.check_time()


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


class _CountLoopsAndConcatenations(NodeTransformer):
    """Every `{% for %}`'s iterable counted against the budget; every `~` bounded in size."""

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
        return _bounded(super().call_binop(context, operator, left, right), f"'{operator}'")

    def call(__self, __context: jinja2.runtime.Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        __self.budget.check_time()  # a macro that calls itself, or another, runs no loop
        return _bounded(super().call(__context, __obj, *args, **kwargs), "a call")

    def render_bounded(self, name: str, context: Mapping[str, Any], *, seconds: float = RENDER_SECONDS) -> str:
        """Template `name` rendered within the bounds, with `seconds` of wall-clock time."""
        template = self.get_template(name)
        self.budget = _Budget(seconds)
        parts, rendered = [], 0
        chunks = template.generate(context)
        try:
            for part in chunks:
                rendered += len(part)
                if rendered > MAX_OUTPUT:
                    raise RenderLimitExceeded(f"the output passed {MAX_OUTPUT:,} characters")
                self.budget.check_time()
                parts.append(part)
        except RenderLimitExceeded as exceeded:
            # Raised here, outside the template's code: its line is where its generator waits.
            exceeded.lineno = exceeded.lineno or _waiting_line(chunks, template)
            raise
        return "".join(parts)


def _waiting_line(chunks: Iterator[str], template: jinja2.Template) -> int | None:
    """The template line whose output `chunks` (from `Template.generate`) last yielded."""
    line = None
    current: Any = chunks
    while current is not None and getattr(current, "gi_frame", None) is not None:
        frame = current.gi_frame
        if frame.f_code.co_filename == template.filename:
            line = template.get_corresponding_lineno(frame.f_lineno)
        current = current.gi_yieldfrom
    return line


def _lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:  # jinja's names
    """Jinja's `lipsum`, which would write paragraphs by the million on request: at most 100 of 1,000 words."""
    if n > 100 or max > 1_000:
        raise RenderLimitExceeded("lipsum() may make at most 100 paragraphs of at most 1,000 words")
    return str(generate_lorem_ipsum(n, html, min, max))


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
