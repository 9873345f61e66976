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

from codegen.errors import Problem

PREFIX = "codegen: "
WARNING = "warning: "


def printable(text: str) -> str:
    """Text from data (the spec, a journal, a contract entry), safe to print on one line.

    Every character `str.isprintable` rejects comes out as a Python escape
    (`\\x1b`, `\\n`, `\\u202e`, `\\u2028`): C0 and C1 controls, bidi and other
    format characters (zero-width ones, the BOM), line and paragraph separators
    (which `str.splitlines` splits on), surrogates, unassigned code points and
    every space but the plain one.  So no data can move the cursor, set a title,
    hide itself or start a line that looks like a verdict; letters of any
    script, marks and symbols stay as they are.
    """
    if text.isprintable():
        return text  # the common case, without building a new string
    return "".join(char if char.isprintable() else _escape(char) for char in text)


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return repr(char)[1:-1]
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable_lines(text: str) -> str:
    """`printable` line by line: the newlines of a message stay, every other control is escaped.

    What a message says on purpose spans lines; data inside it must not (it
    goes through `printable`, or `Problem.render`, first).
    """
    return "\n".join(printable(line) for line in text.split("\n"))


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _stdout(line: str) -> None:
    print(line, flush=True)


class Used:
    """What a step used, said by the step as it learns it."""

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
    def step(self, name: str) -> Iterator[Used]:
        """Time a step; its line is printed only when it succeeds (a failure says more)."""
        used = Used()
        started = time.perf_counter()
        yield used
        self.step_done(name, time.perf_counter() - started, *used.parts)

    def step_done(self, name: str, elapsed: float, *used: str) -> None:
        """The line of a step timed elsewhere (one that ran in the background)."""
        detail = f" ({', '.join(used)})" if used else ""
        self(f"{name:9} {elapsed:5.2f} s{detail}")


Say = Callable[[str], None]
