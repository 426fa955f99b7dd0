"""Every edit the server offers is checked before it is offered (DESIGN.md, trust boundaries): each range is in
the document and falls where the analysis meant it (in the client's units and line model, nothing clamped),
the edits do not overlap, and the edited file has no more syntax errors than before (syntax_check.py). Outside
the edited ranges the text is then byte-identical, because a client applies the ranges exactly as checked here.
An edit that fails is not offered; the reason goes to the log (and, for a Coder proposal, to the user).
"""

from __future__ import annotations

from collections.abc import Sequence

from lsprotocol import types

from cudalens.analysis.findings import Span
from cudalens.analysis.syntax_check import SyntaxBaseline
from cudalens.server.convert import Positions


class EditRefused(ValueError):
    pass


def edited_text(pos: Positions, edits: Sequence[types.TextEdit], meant: Sequence[Span | None] = ()) -> str:
    """The text after `edits`, applied as an LSP client applies them. `meant[i]`: the 1-based character span
    edit i was made from, which its LSP range must denote exactly. EditRefused when a range is not right."""
    text = "".join(pos.lines)
    pieces = []
    for i, edit in enumerate(edits):
        start, end = pos.offset(edit.range.start), pos.offset(edit.range.end)
        if start is None or end is None or start > end:
            raise EditRefused("its range is not in the document")
        span = meant[i] if i < len(meant) else None
        if span is not None and (pos.char_offset(span.line, span.column),
                                 pos.char_offset(span.end_line, span.end_column)) != (start, end):
            raise EditRefused(f"its range does not fall on the text of line {span.line} it was made for")
        pieces.append((start, end, edit.new_text))
    pieces.sort(key=lambda p: (p[0], p[1]))
    out, at = [], 0
    for start, end, new in pieces:
        if start < at:
            raise EditRefused("its edits overlap")
        out += [text[at:start], new]
        at = end
    out.append(text[at:])
    return "".join(out)


def check_edits(pos: Positions, edits: Sequence[types.TextEdit], syntax: SyntaxBaseline,
                meant: Sequence[Span | None] = ()) -> str | None:
    """Why `edits` may not be offered on the text `pos` describes, or None when they may."""
    try:
        edited = edited_text(pos, edits, meant)
    except EditRefused as exc:
        return str(exc)
    if not syntax.accepts(edited):
        return "the edited file would not parse"
    return None
