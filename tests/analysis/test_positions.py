"""The one line model (analysis/positions.py): LSP's line ends only, whatever else `str.splitlines` breaks at."""

from __future__ import annotations

import pytest

from cudalens.analysis.positions import LineIndex, line_contents, parser_text, split_lines

OTHER_BREAKS = ["\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


@pytest.mark.parametrize("char", OTHER_BREAKS)
def test_only_lsp_line_ends_end_a_line(char):
    text = f"a{char}b\nc\r\nd\re"
    assert split_lines(text) == [f"a{char}b\n", "c\r\n", "d\r", "e"]
    assert line_contents(text) == [f"a{char}b", "c", "d", "e"]
    assert len(text.splitlines()) == 5  # what went wrong before


def test_split_lines_is_splitlines_where_they_agree():
    for text in ("", "a", "a\n", "a\n\n", "\r\n\r", "x\ry\r\nz\n"):
        assert split_lines(text) == text.splitlines(True)
        assert "".join(split_lines(text + "\f")) == text + "\f"
    assert line_contents("a\n") == ["a", ""]  # the empty line after the last line end is a line


def test_the_parsers_see_lone_crs_as_line_ends_at_the_same_offsets():
    text = "a\rb\r\nc\r"
    assert parser_text(text) == "a\nb\r\nc\n" and len(parser_text(text)) == len(text)
    index = LineIndex("x\ré\rz")
    assert index.to_char((1, 2)) == (2, 2)  # row 1 is the line after the lone \r; é is 2 bytes
