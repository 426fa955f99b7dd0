"""C++/CUDA source text read without a parser: where a comment, a literal or a preprocessor line ends, which
bracket closes one, whether a piece of code mentions torch, and launches written the way clang-format spaces them.

Two places cut a CUDA source into its top-level items with these: `device_only` (in the server, blanks the
torch host code before a quick compile) and `lib/split_source` (in the worker, splits a load_inline source into
a device and a glue unit); the analyzer reads spaced launches through `joined_launches` too (positions.py). The
worker's interpreter has no tree-sitter and maybe no cudalens, so this module is standard library only
(worker/child/__init__.py) and imports nothing of ours: the one module of another folder analysis/ imports.
"""

from __future__ import annotations

import re

TORCH_MARKERS = re.compile(
    r"\b(?:torch|at|c10|pybind11|py)::|\b(?:TORCH|AT|C10|PYBIND11)_[A-Z_]+\b|\bTensor\b|\bIntArrayRef\b|"
    r"\bnamespace\s+(?:torch|at|c10|py)\b"
)
_CLOSERS = {"{": "}", "(": ")", "[": "]"}
# `<< <…>> >(` as clang-format writes a launch when it is not configured for CUDA (either side may be spaced)
_SPACED_LAUNCH = re.compile(r"<<([ \t]*)<(?!<)([^;{}]*?)>>([ \t]*)>(?=\s*\()")


def joined_launches(text: str) -> str:
    """`text` with each spaced launch `<< <grid, block>> >(` written `<<< grid, block>>> (`: the spaces move
    behind the brackets, so every offset stays (the analyzer's positions, the split's line numbers)."""
    if "<< " not in text and "<<\t" not in text and ">> >" not in text:
        return text
    return _SPACED_LAUNCH.sub(_joined_launch, text)


def _joined_launch(match: re.Match) -> str:
    before, config, after = match.groups()
    if not before and not after:
        return match.group(0)
    return f"<<<{before}{config}>>>{after}"


def skip_comment_or_literal(text: str, i: int) -> int:
    """If a comment, string or character literal starts at i, the index after it (a `//` comment: its newline);
    else i. A literal ends at its unescaped quote or, unterminated, after its line."""
    two = text[i : i + 2]
    if two == "//":
        end = text.find("\n", i)
        return len(text) if end < 0 else end
    if two == "/*":
        end = text.find("*/", i + 2)
        return len(text) if end < 0 else end + 2
    if text[i : i + 1] in ("'", '"'):
        quote, j = text[i], i + 1
        while j < len(text) and text[j] != quote and text[j] != "\n":
            j += 2 if text[j] == "\\" else 1
        return min(j + 1, len(text))
    return i


def directive_end(text: str, i: int) -> int:
    """The index of the newline ending the preprocessor line that starts at i, past `\\` continuations."""
    j = i
    while True:
        end = text.find("\n", j)
        if end < 0:
            return len(text)
        if end > 0 and text[end - 1] == "\\":
            j = end + 1
            continue
        return end


def closing_bracket(text: str, i: int) -> int:
    """The index of the bracket closing the `{`, `(` or `[` at i, comments and literals skipped over (len(text)
    if it is never closed)."""
    opener, closer = text[i], _CLOSERS[text[i]]
    depth = 0
    while i < len(text):
        j = skip_comment_or_literal(text, i)
        if j != i:
            i = j
            continue
        if text[i] == opener:
            depth += 1
        elif text[i] == closer:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return len(text)
