"""didChange edits by LSP's rules (server/text_sync.py), and the checks an offered edit passes (edit_check.py)."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from cudalens.analysis.findings import Span
from cudalens.analysis.positions import split_lines
from cudalens.analysis.syntax_check import SyntaxBaseline
from cudalens.server.convert import Positions
from cudalens.server.edit_check import check_edits
from cudalens.server.text_sync import BadChange, apply_change

CODEC = PositionCodec()


def change(start: tuple[int, int], end: tuple[int, int], text: str) -> types.TextDocumentContentChangePartial:
    return types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(*start), types.Position(*end)), text=text)


def test_changes_count_lsp_lines_and_utf16_units():
    text = "a\fb\n😀x\r\ny"
    assert apply_change(text, change((0, 3), (0, 3), "!"), CODEC) == "a\fb!\n😀x\r\ny"  # \f is not a line end
    assert apply_change(text, change((1, 2), (1, 3), "X"), CODEC) == "a\fb\n😀X\r\ny"  # 😀 is two units
    assert apply_change(text, change((1, 99), (2, 0), ""), CODEC) == "a\fb\n😀xy"  # past a line's end: its end
    assert apply_change(text, change((2, 1), (2, 1), "\n"), CODEC) == text + "\n"
    assert apply_change("a\n", change((1, 0), (1, 0), "b"), CODEC) == "a\nb"  # the empty last line


@pytest.mark.parametrize(("start", "end", "why"), [((0, 2), (0, 1), "ends before it starts"),
                                                  ((3, 0), (3, 0), "past the end"),
                                                  ((0, 0), (7, 0), "past the end")])
def test_changes_that_do_not_fit_are_refused(start, end, why):
    with pytest.raises(BadChange, match=why):
        apply_change("ab\ncd", change(start, end, "x"), CODEC)


def test_an_offered_edit_must_fall_where_it_was_meant_and_keep_the_file_parsing():
    text = "__global__ void k(float* a) {\f a[0] = 1; }\n"
    pos, syntax = Positions(split_lines(text), CODEC), SyntaxBaseline(text, "/k.cu")
    end = types.Position(0, len(text) - 1)
    comment = types.TextEdit(types.Range(end, end), "  // ok")
    assert check_edits(pos, [comment], syntax, [Span(1, len(text), 1, len(text))]) is None
    assert "does not fall" in check_edits(pos, [comment], syntax, [Span(1, 3, 1, 3)])
    broken = types.TextEdit(types.Range(types.Position(0, 30), types.Position(0, 30)), "// ")
    assert check_edits(pos, [broken], syntax) == "the edited file would not parse"
    overlapping = [types.TextEdit(types.Range(types.Position(0, 0), types.Position(0, 5)), ""),
                   types.TextEdit(types.Range(types.Position(0, 3), types.Position(0, 8)), "")]
    assert check_edits(pos, overlapping, syntax) == "its edits overlap"
    far = types.Position(9, 0)
    assert check_edits(pos, [types.TextEdit(types.Range(far, far), "x")], syntax) == "its range is not in the document"
