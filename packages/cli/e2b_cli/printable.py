"""One escape for text that comes from the API, before any of it reaches a terminal.

A template id, an alias, a metadata value or an error message is the API's
data, which anyone who can set it controls: printed raw, `ESC[2J` clears the
screen, `ESC]0;...` sets the window title, and a bidi override reorders what
the line shows. Every table cell and message the CLI prints goes through
`printable`; JSON output needs nothing more, as `json.dumps` escapes every
character outside ASCII. (The same rule as the code generator's
`codegen.messages.printable`, which the CLI cannot import.)
"""

from __future__ import annotations

__all__ = ["printable"]

# Bidi controls reorder what a terminal shows without showing themselves.
_BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def printable(text: str) -> str:
    """`text` with C0 and C1 controls (newline and ESC included) and bidi controls as Python escapes.

    `\\x1b`, `\\n`, `\\u202e`: visible, one line, and inert on any terminal.
    """
    if text.isprintable() and text.isascii():
        return text  # the common case, without building a new string
    out = []
    for char in text:
        code = ord(char)
        if code < 0x20 or 0x7F <= code < 0xA0 or char in _BIDI_CONTROLS:
            out.append(repr(char)[1:-1] if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(char)
    return "".join(out)
