"""Text from the repository (file names, identifiers quoted in messages, config values) made safe to print in
one line of a terminal or a CI log.

A file named `a.cu\\n::error::…` would otherwise start a line of its own, which GitHub Actions runs as a
workflow command (it reads commands from stdout and stderr alike), and an escape sequence would rewrite the
terminal. Control characters, line and paragraph separators, format characters (bidi overrides, which can
make a line read differently from what it holds) and lone surrogates (undecodable bytes of a file name)
are written as Python escapes: `\\n`, `\\x1b`, `\\u202e`, `\\udcff`.
"""

from __future__ import annotations

import unicodedata

_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_UNSAFE = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def _escaped(char: str) -> str:
    if char in _SHORT:
        return _SHORT[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text: str, keep: str = "") -> str:
    """`text` with every character that could end the line or act on the terminal written as an escape, but
    those in `keep` (a format that escapes them its own way)."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(_escaped(c) if unicodedata.category(c) in _UNSAFE and c not in keep else c for c in text)
