"""Text from metadata made safe for a human's screen: control characters shown, never obeyed.

Table, column, ref and location names come from files anyone can write. Printed raw, an escape sequence clears the
screen or sets the title, a newline forges a line of our own output (``tables: ALL OK``), a right-to-left override
reorders what is read, and rich markup (``[/bold]``, ``[link=...]``) crashes rendering or hides a link. Every
human-readable output (text tables, progress and summary lines, error lines, logs) passes values through
:func:`printable`, and through :func:`markup_safe` where rich renders them. JSON output keeps exact values: the
JSON encoder escapes control characters itself.
"""
from __future__ import annotations

import re

#: C0 and C1 controls and DEL; the bidirectional embeddings, overrides, isolates and marks; line and paragraph
#: separators (which terminals and editors break lines on).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _shown(match: re.Match[str]) -> str:
    char = match.group(0)
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: object) -> str:
    """``text`` with every control character written as its escape: ``\\x1b``, ``\\n``, ``\\u202e``."""
    return _UNSAFE.sub(_shown, str(text))


def printable_lines(text: object) -> str:
    """Like :func:`printable`, but line breaks stay: for multi-line text of our own (a traceback) that quotes data."""
    return "\n".join(printable(line) for line in str(text).split("\n"))


def markup_safe(text: object) -> str:
    """A value for rich to render as it is: control characters shown, markup brackets escaped."""
    from rich.markup import escape

    return escape(printable(text))
