"""One escape for text that comes from the API, before any of it reaches a terminal.

A template id, an alias, a metadata value or an error message is the API's
data, which anyone who can set it controls: printed raw, `ESC[2J` clears the
screen, `ESC]0;...` sets the window title, and a bidi override reorders what
the line shows. Every table cell and message the CLI prints goes through
`printable`; JSON output needs nothing more, as `json.dumps` escapes every
character outside ASCII. (The same rule as the code generator's
`toolkit.printable.printable`, which the CLI cannot import.)
"""

from __future__ import annotations

__all__ = ["printable"]


def printable(text: str) -> str:
    """`text` with every character `str.isprintable` rejects as a Python escape.

    `\\x1b`, `\\n`, `\\u202e`, `\\u2028`: C0 and C1 controls, bidi and other format
    characters (zero-width ones, the BOM), line and paragraph separators,
    surrogates, unassigned code points and every space but the plain one come
    out visible, on one line, and inert on any terminal; letters of any script,
    marks and symbols stay as they are.
    """
    if text.isprintable():
        return text  # the common case, without building a new string
    return "".join(char if char.isprintable() else _escape(char) for char in text)


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return repr(char)[1:-1]
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
