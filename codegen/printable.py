"""Text from data, made safe for a terminal: the one escape every message applies.

Data (the spec, a journal, a contract entry, a file name, tool output) may
hold controls that move the cursor, set a window title or start a line that
looks like a verdict. Everything codegen prints from data goes through here.
"""

from __future__ import annotations

# Bidi controls reorder what a terminal (or a review page) shows without showing themselves.
_BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def printable(text: str) -> str:
    """Text from data (the spec, a journal, a contract entry), safe to print on one line.

    C0 and C1 controls (newline and ESC included) and bidi controls come out as
    Python escapes (`\\x1b`, `\\n`, `\\u202e`), so no data can move the cursor,
    set a title or start a line that looks like a verdict.
    """
    out = []
    for char in text:
        code = ord(char)
        if code < 0x20 or 0x7F <= code < 0xA0 or char in _BIDI_CONTROLS:
            out.append(repr(char)[1:-1] if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(char)
    return "".join(out)


def printable_lines(text: str) -> str:
    """`printable` line by line: the newlines of a message stay, every other control is escaped.

    What a message says on purpose spans lines; data inside it must not (it
    goes through `printable`, or `Problem.render`, first).
    """
    return "\n".join(printable(line) for line in text.split("\n"))
