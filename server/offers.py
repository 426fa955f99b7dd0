"""Edits the Coder proposes, held until the user applies them: nothing is written without the user, and an
edit applies only to the very text it was computed from (the document version the run started at)."""

from __future__ import annotations

import difflib
import itertools
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from cudalens.server.convert import workspace_edit

_IDS = itertools.count(1)


@dataclass(frozen=True)
class Offer:
    id: str
    uri: str
    path: str
    version: int | None  # the document version the proposal was computed from
    original: str  # the document's text then
    start_line: int  # 0-based first line replaced
    end_line: int  # 0-based line after the last replaced (len(lines) for "to the end")
    new_text: str
    summary: str

    def edit(self, codec: PositionCodec, document_changes: bool) -> types.WorkspaceEdit:
        lines = self.original.splitlines(keepends=True)
        start = types.Position(self.start_line, 0)
        if self.end_line < len(lines) or not lines or lines[-1].endswith(("\n", "\r")):
            end = types.Position(self.end_line, 0)
        else:  # the last line has no line end: its end, in the client's units
            end = types.Position(len(lines) - 1, codec.client_num_units(lines[-1]))
        return workspace_edit(self.uri, self.version, [types.TextEdit(types.Range(start, end), self.new_text)],
                              document_changes)

    def new_document(self) -> str:
        lines = self.original.splitlines(keepends=True)
        return "".join(lines[: self.start_line]) + self.new_text + "".join(lines[self.end_line:])

    def diff(self) -> str:
        name = Path(self.path).name
        return "".join(difflib.unified_diff(
            self.original.splitlines(keepends=True), self.new_document().splitlines(keepends=True),
            f"a/{name}", f"b/{name}",
        ))

    def diff_file(self, folder: Path | None) -> Path:
        """The diff in a file the editor can show (in the run's log folder when there is one)."""
        if folder is None:
            folder = Path(tempfile.mkdtemp(prefix="cudalens-offer-"))
        target = folder / f"{Path(self.path).stem}-{self.id}.diff"
        target.write_text(self.diff(), encoding="utf-8")
        return target


def whole_document(uri: str, path: str, version: int | None, text: str, new_text: str, summary: str) -> Offer:
    return Offer(new_id(), uri, path, version, text, 0, len(text.splitlines(keepends=True)), new_text, summary)


def new_id() -> str:
    return f"cudalens-{next(_IDS)}"


@dataclass
class Offers:
    by_id: dict[str, Offer] = field(default_factory=dict)

    def add(self, offer: Offer) -> Offer:
        self.by_id[offer.id] = offer
        return offer

    def get(self, offer_id: object) -> Offer | None:
        return self.by_id.get(offer_id) if isinstance(offer_id, str) else None

    def drop(self, offer_id: str) -> None:
        self.by_id.pop(offer_id, None)


def stale_reason(offer: Offer, version: int | None, text: str | None) -> str | None:
    """Why `offer` may not be applied to the document as it is now, or None."""
    name = Path(offer.path).name
    if text is None:
        return f"cudalens: {name} is no longer open; the proposal was not applied"
    if version != offer.version or text != offer.original:
        return (f"cudalens: {name} changed since the proposal was made (version {offer.version} → {version}); "
                "it was not applied — run it again on the current text")
    return None
