"""Text from data, made safe for a terminal: the one escape every message applies.

Data (the spec, a journal, a contract entry, a file name, tool output) may
hold controls that move the cursor, set a window title or start a line that
looks like a verdict. Everything codegen prints from data goes through here.
"""

from __future__ import annotations

from collections.abc import Callable

Say = Callable[[str], None]  # where a tool says a line (stderr, stdout, a test's list)


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
