"""Applying the editor's `didChange` edits to the server's copy of a document, by LSP's rules.

pygls 2.1.1 applies them over `str.splitlines` lines (which also break at `\\f`, U+2028...), so an edit after
such a character lands on another line than the client's, and it applies an inverted range (end before start)
or a position past the last line without a word, garbling the text. Here a change is applied in the LSP line
model (analysis/positions.py) or not at all: `BadChange` says why, and the caller keeps the last good text.
"""

from __future__ import annotations

from collections.abc import Sequence

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from cudalens.analysis.positions import content_end, line_start, split_lines
from cudalens.server.convert import Positions, unit_index


class BadChange(ValueError):
    """A change that cannot be applied to the text it was sent for."""


def apply_change(text: str, change: types.TextDocumentContentChangeEvent, codec: PositionCodec) -> str:
    if not isinstance(change, types.TextDocumentContentChangePartial):
        return change.text  # the whole document
    start, end = offset(text, change.range.start, codec), offset(text, change.range.end, codec)
    if start is None or end is None:
        lines = Positions(split_lines(text), codec).line_count
        raise BadChange(f"the range {_show(change.range)} is past the end of the document ({lines} lines)")
    if start > end:
        raise BadChange(f"the range {_show(change.range)} ends before it starts")
    return text[:start] + change.text + text[end:]


def offset(text: str, position: types.Position, codec: PositionCodec) -> int | None:
    """Positions.offset without splitting the whole text (a keystroke reads only up to its line)."""
    start = line_start(text, position.line) if position.line >= 0 and position.character >= 0 else None
    if start is None:
        return None
    return start + unit_index(text[start : content_end(text, start)], position.character, codec)


def apply_changes(text: str, changes: Sequence[types.TextDocumentContentChangeEvent], codec: PositionCodec) -> str:
    """All of `changes` in order, or none (BadChange)."""
    for change in changes:
        text = apply_change(text, change, codec)
    return text


def _show(rng: types.Range) -> str:
    return f"{rng.start.line}:{rng.start.character}-{rng.end.line}:{rng.end.character}"
