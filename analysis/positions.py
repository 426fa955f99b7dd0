"""The one line model of cudalens, LSP's: a line ends at `\\n`, `\\r\\n` or a lone `\\r`, and nowhere else.

Python's `str.splitlines` also breaks at `\\v`, `\\f`, `\\x1c`-`\\x1e`, `\\x85`, U+2028 and U+2029, which an editor
shows inside a line: a position counted that way lands on the wrong line in the client. Tree-sitter counts rows
at `\\n` only, so the parsers read `parser_text(text)`, where each lone `\\r` is a `\\n` (the same length: every
offset stays), and their rows are then the LSP lines. The same function writes a launch that clang-format spaced
out, `k<< <grid, block >> >(…)`, as `k<<< grid, block >>> (…)` (the same length again), so that everything that
reads launches, by tree or by text, reads one spelling.

Tree-sitter speaks UTF-8 byte columns, 0-based; findings speak character columns, 1-based (`LineIndex`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate

from cudalens.analysis.findings import Span
from cudalens.worker.child.cpp_source import (
    joined_launches,  # stdlib only; the worker's split reads launches so too
)

# the characters `str.splitlines` breaks at besides \n and \r
_OTHER_BREAKS = "\v\f\x1c\x1d\x1e\x85\u2028\u2029"
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
LINE_BREAK = re.compile(r"\r\n|\r|\n")
_LONE_CR = re.compile(r"\r(?!\n)")
_BREAK_CHAR = re.compile(r"[\r\n]")


def split_lines(text: str) -> list[str]:
    """The lines of `text` with their line ends, as an LSP client counts them; like `str.splitlines(True)`, a
    text that ends with a line end has no empty last entry."""
    if not any(char in text for char in _OTHER_BREAKS):  # eight searches in C: a tenth of one regex scan
        return text.splitlines(True)  # the same lines, split in C
    return _LINE.findall(text)


def without_line_end(line: str) -> str:
    return line.rstrip("\r\n")


@dataclass(frozen=True)
class TextLines:
    """A text's lines with their line ends, as `split_lines` splits them, and where a 1-based (line, character
    column) falls in the text: the one conversion the server's edits and `cudalens check --fix` share."""

    lines: Sequence[str]

    @classmethod
    def of(cls, text: str) -> TextLines:
        return cls(split_lines(text))

    @property
    def line_count(self) -> int:
        """LSP's count: one more line than there are line ends (a text that ends with one has an empty last line,
        which `lines` leaves out)."""
        return len(self.lines) + (not self.lines or self.lines[-1].endswith(("\n", "\r")))

    @cached_property
    def starts(self) -> list[int]:
        """The index in the text where each line starts, and the text's length."""
        return [0, *accumulate(map(len, self.lines))]

    def char_offset(self, line: int, column: int) -> int | None:
        """The index in the text of a 1-based line and character column; None when it is not in the text (past
        a line's end, its line end included)."""
        if line == self.line_count > len(self.lines) and column == 1:
            return self.starts[-1]
        if not 0 < line <= len(self.lines) or not 0 < column <= len(without_line_end(self.lines[line - 1])) + 1:
            return None
        return self.starts[line - 1] + column - 1


def line_start(text: str, line: int) -> int | None:
    """Where the 0-based line `line` starts in `text`; None past the last line. Reads only up to that line."""
    at = 0
    if "\r" not in text:
        for _ in range(line):
            at = text.find("\n", at) + 1
            if at == 0:
                return None
        return at
    if line == 0:
        return 0
    for number, end in enumerate(LINE_BREAK.finditer(text), start=1):
        if number == line:
            return end.end()
    return None


def content_end(text: str, start: int) -> int:
    """Where the line that starts at `start` ends, before its line end."""
    if "\r" in text:
        found = _BREAK_CHAR.search(text, start)
        return found.start() if found is not None else len(text)
    end = text.find("\n", start)
    return end if end >= 0 else len(text)


def line_contents(text: str) -> list[str]:
    """The lines of `text` without their line ends: one more than the line ends (the last may be empty)."""
    return text.split("\n") if "\r" not in text else LINE_BREAK.split(text)


def parser_text(text: str) -> str:
    """`text` as the parsers read it: a lone `\\r` becomes `\\n`, so tree-sitter's rows are the LSP lines, and a
    spaced launch `<< <…>> >` is written `<<< …>>> ` (every offset stays)."""
    if "\r" in text:
        text = _LONE_CR.sub("\n", text)
    return joined_launches(text)


class LineIndex:
    """Converts tree-sitter points of one text (as `parser_text` gives it) to 1-based (line, character column)."""

    def __init__(self, text: str, converted: bool = False) -> None:
        """`converted`: `text` is parser_text's already (its regex over a 20,000-line text costs ~2 ms)."""
        self.lines = (text if converted else parser_text(text)).split("\n")

    def to_char(self, point: tuple[int, int]) -> tuple[int, int]:
        row, byte_col = point
        if row >= len(self.lines):
            return len(self.lines), len(self.lines[-1]) + 1 if self.lines else 1
        line = self.lines[row]
        if line.isascii():
            return row + 1, byte_col + 1
        return row + 1, len(line.encode("utf-8", errors="surrogatepass")[:byte_col].decode("utf-8", "ignore")) + 1

    def span(self, node) -> Span:
        line, col = self.to_char(node.start_point)
        end_line, end_col = self.to_char(node.end_point)
        return Span(line, col, end_line, end_col)
