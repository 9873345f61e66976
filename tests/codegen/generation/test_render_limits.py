"""The overlays' sandbox bounds: what a template asks to make large is one line with its line, exit 2, in a second."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codegen.generation.overlays import render_overlays
from codegen.openapi.document import load_spec
from codegen.openapi.operation_map import load_operation_map
from codegen.openapi.sdk_filter import filter_spec
from tests.codegen.conftest import ROOT, Result, unchanged
from toolkit.errors import ToolError

OVERLAYS = ROOT / "templates" / "overlays"
TEMPLATE = "error_codes.py.jinja"

# The issue's three cases (issue 40, finding 6), then one for each other bound.
ISSUE_CASES = {
    "range-10**8": (
        "{% for x in range(10**8) %}x{% endfor %}",
        "range() of 100,000,000 items is over the 10,000 a template may ask for",
    ),
    "a-times-10**10": ("{{ 'a' * 10**10 }}", "'*' would make 10,000,000,000 items, over the 1,000,000 allowed"),
    "nested-range-99999": (
        "{% for x in range(99999) %}{% for y in range(99999) %}{% endfor %}{% endfor %}",
        "range() of 99,999 items is over the 10,000 a template may ask for",
    ),
}
CASES = {
    **ISSUE_CASES,
    "nested-loops": (
        "{% for x in range(9999) %}{% for y in range(9999) %}{% endfor %}{% endfor %}",
        "loops ran more than 1,000,000 times in one template",
    ),
    "nested-loops-over-a-name": (
        "{% set r = range(9999) | list %}{% for x in r %}{% for y in r %}{% for z in r %}"
        "{% endfor %}{% endfor %}{% endfor %}",
        "loops ran more than 1,000,000 times in one template",
    ),
    # Any other error a template raises: one line too, never a traceback read as drift.
    "zero-division": ("{{ 1 // 0 }}", "ZeroDivisionError: integer division or modulo by zero"),
    "bad-format": ("{{ '%d' % 'x' }}", "TypeError: %d format: a real number is required, not PythonCode"),
    "power": ("{{ 10 ** 100000 }}", "'**' would make an integer of over 4,096 bits"),
    "list-times": ("{{ ([1] * 1000) * 100000 }}", "'*' would make 100,000,000 items, over the 1,000,000 allowed"),
    "plus-doubling": (
        "{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s + ns.s %}{% endfor %}",
        "'+' would make 1,048,576 items, over the 1,000,000 allowed",
    ),
    "tilde-doubling": (
        "{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
        "'~' made a value of 1,048,576 items, over the 1,000,000 allowed",
    ),
    "filter-width": (
        "{{ 'a' | center(10**9) }}",
        "filter 'center' was given 1,000,000,000, over the 10,000 a filter may take",
    ),
    "lipsum": ("{{ lipsum(10**6) }}", "lipsum() may make at most 100 paragraphs of at most 1,000 words"),
    "output": (
        "{% for i in range(9000) %}" + "x" * 1000 + "{% endfor %}",
        "the output passed 2,000,000 characters",
    ),
    "output-buffered": (
        "{% set kept %}{% for i in range(9000) %}" + "x" * 1000 + "{% endfor %}{% endset %}",
        "the output passed 2,000,000 characters",
    ),
    "percent-width": (
        "{{ '%0999999999d' % 1 }}",
        "a format's width or precision of 999,999,999 is over the 10,000 allowed",
    ),
    "percent-star": (
        "{{ '%*d' % (999999999, 1) }}",
        "a format's width or precision of 999,999,999 is over the 10,000 allowed",
    ),
    "format-width": (
        "{{ '{:>999999999}'.format(1) }}",
        "a format's width or precision of 999,999,999 is over the 10,000 allowed",
    ),
    "format-field-width": (
        "{{ '{x:{w}}'.format_map({'x': 1, 'w': 999999999}) }}",
        "a format's width or precision of 999,999,999 is over the 10,000 allowed",
    ),
    "recursion": (
        "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}",
        "RecursionError: maximum recursion depth exceeded",
    ),
    "float-overflow": ("{{ 2.0 ** 5000 }}", "OverflowError: (34, 'Numerical result out of range')"),
}


def _sdk_spec() -> dict[str, Any]:
    document = load_spec((ROOT / "spec" / "openapi.yml").read_bytes())
    operations = load_operation_map(ROOT / "spec" / "operations.yml")
    return filter_spec(document.data, tags=("sandboxes", "snapshots", "templates"), operations=operations)


def _overlays_with(tmp_path: Path, payload: str) -> tuple[Path, int]:
    """A copy of the overlays whose error-codes template ends with `payload`; the copy, and the payload's line."""
    folder = tmp_path / "overlays"
    shutil.copytree(OVERLAYS, folder)
    text = (folder / TEMPLATE).read_text()
    (folder / TEMPLATE).write_text(text + payload + "\n")
    return folder, text.count("\n") + 1


def _outcome_within(seconds: float, render: Callable[[], object]) -> BaseException | None:
    """What `render` raised (None: nothing) if it ended within `seconds`; a failed test if not.

    In a thread of its own, so that a template that never ends (today's main) fails the test instead of hanging it.
    """
    outcome: list[BaseException | None] = []

    def target() -> None:
        try:
            render()
            outcome.append(None)
        except BaseException as error:  # MemoryError included: it is what is looked at
            outcome.append(error)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert outcome, f"rendering did not end within {seconds} s"
    return outcome[0]


@pytest.mark.parametrize("case", CASES)
def test_a_template_past_a_bound_is_one_line_with_its_line(tmp_path: Path, case: str) -> None:
    payload, said = CASES[case]
    folder, line = _overlays_with(tmp_path, payload)
    spec = _sdk_spec()
    started = time.monotonic()
    error = _outcome_within(60, lambda: render_overlays(folder, spec))
    assert time.monotonic() - started < 10  # each stops in well under a second
    assert isinstance(error, ToolError), repr(error)
    [problem] = error.problems
    assert problem.where == f"templates/overlays/{TEMPLATE}:{line}"
    assert problem.message == f"cannot render: {said}"


def test_rendering_within_every_bound_ends_and_past_its_time_is_one_line_naming_the_limit(tmp_path: Path) -> None:
    """What a template may reasonably do renders, with room to spare; the same past its time does not.

    A limit of 0 s is past at the first check, whatever the machine's load: no race with a timer.
    """
    payload = (
        "{% set total = namespace(n=0) %}{% for x in range(10000) %}{% set total.n = total.n + x %}{% endfor %}"
        "# {{ total.n }} {{ (2 ** 4000).bit_length() }} {{ ('ab' * 1000) | length }} {{ 'a' | center(80) | length }}"
        " {{ ('%5d' % 1) | length }} {{ '{:>8}'.format('a') | length }}\n"
    )
    folder, _ = _overlays_with(tmp_path, payload)
    rendered = render_overlays(folder, _sdk_spec(), seconds=60)
    assert "# 49995000 4001 2000 80 5 8\n" in rendered["packages/python-sdk/e2b/api/error_codes.py"].decode()
    with pytest.raises(ToolError) as caught:
        render_overlays(folder, _sdk_spec(), seconds=0)
    [problem] = caught.value.problems
    assert problem.message == "cannot render: rendering ran past its 0 s limit"
    assert problem.where is not None and problem.where.startswith("templates/overlays/")


@pytest.mark.parametrize("verb", [("generate",), ("check", "--no-cache")])
@pytest.mark.parametrize("case", ISSUE_CASES)
def test_the_issue_cases_end_generate_and_check_with_exit_2_in_one_line(
    project: Path, run: Callable[..., Result], case: str, verb: tuple[str, ...]
) -> None:
    payload, said = ISSUE_CASES[case]
    template = project / "templates" / "overlays" / TEMPLATE
    text = template.read_text()
    template.write_text(text + payload + "\n")
    started = time.monotonic()
    with unchanged(project):
        result = run(project, *verb)
    assert time.monotonic() - started < 10
    assert result.code == 2, result.text
    errors = [line for line in result.err.splitlines() if line.startswith("codegen: error: ")]
    line = text.count("\n") + 1
    assert errors == [f"codegen: error: templates/overlays/{TEMPLATE}:{line}: cannot render: {said}"], result.text
    assert "Traceback" not in result.text
