"""Every message `python -m codegen` prints, in one style.

On stderr, each line starts with `codegen: `; problems with `codegen: error: `,
`codegen: warning: ` or `codegen: interrupted: `.  Each step prints one line when it is done: its name,
its duration and what it used (`codegen: fetch     0.21 s (upstream, runtime@54f8c7f)`).
`--quiet` keeps only problems and the verdict.  The verdict (clean, drift, what
was written) goes to stdout, with the same prefix.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from toolkit.errors import Problem
from toolkit.printable import printable_lines

PREFIX = "codegen: "
WARNING = "warning: "


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _stdout(line: str) -> None:
    print(line, flush=True)


class StepNotes:
    """What a step used, noted by the step as it learns it: its line lists them."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def __call__(self, text: str) -> None:
        self.parts.append(text)


class Messages:
    """Where a run's messages go.  Calling it says a line of progress (or a warning, by its prefix)."""

    def __init__(
        self,
        *,
        quiet: bool = False,
        err: Callable[[str], None] = _stderr,
        out: Callable[[str], None] = _stdout,
    ) -> None:
        self.quiet = quiet
        self._to_err = err
        self._to_out = out

    # The last line of defence: whatever a caller forgot to escape, no control reaches the terminal.
    def _err(self, text: str) -> None:
        self._to_err(printable_lines(text))

    def _out(self, text: str) -> None:
        self._to_out(printable_lines(text))

    def __call__(self, text: str) -> None:
        if text.startswith(WARNING):
            self.warning(text.removeprefix(WARNING))
        elif not self.quiet:
            self._err(PREFIX + text)

    def warning(self, text: str) -> None:
        self._err(f"{PREFIX}{WARNING}{text}")

    def error(self, problem: Problem | str) -> None:
        text = problem.render() if isinstance(problem, Problem) else problem
        self._err(f"{PREFIX}error: {text}")

    def interrupted(self, text: str) -> None:
        self._err(f"{PREFIX}interrupted: {text}")

    def result(self, text: str) -> None:
        """The verdict and what was written: stdout, also with --quiet."""
        first, *rest = text.split("\n")
        self._out(PREFIX + first)
        for line in rest:
            self._out(line)

    def show(self, text: str) -> None:
        """A document (the API change report) on stdout, as it is: also with --quiet."""
        self._out(text)

    @contextmanager
    def step(self, name: str) -> Iterator[StepNotes]:
        """Time a step; its line is printed only when it succeeds (a failure says more)."""
        notes = StepNotes()
        started = time.perf_counter()
        yield notes
        self.step_done(name, time.perf_counter() - started, *notes.parts)

    def step_done(self, name: str, elapsed: float, *used: str) -> None:
        """The line of a step timed elsewhere (one that ran in the background)."""
        detail = f" ({', '.join(used)})" if used else ""
        self(f"{name:9} {elapsed:5.2f} s{detail}")
