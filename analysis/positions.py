"""Tree-sitter speaks UTF-8 byte columns, 0-based; findings speak character columns, 1-based."""

from __future__ import annotations

from cudalens.analysis.findings import Span


class LineIndex:
    """Converts tree-sitter points of one text to 1-based (line, character column)."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")

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
