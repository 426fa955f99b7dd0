"""Edits the Coder proposes, held until the user applies them: nothing is written without the user, an edit
applies only to the very text it was computed from (the document version the run started at), and only an edit
that leaves a valid file is held at all (`Offers.add` checks it, edit_check.py).

A reply that is a whole file replaces the whole file: replacing the kernel's lines with it put a whole Python
module inside the CUDA string of a KernelBench file."""

from __future__ import annotations

import difflib
import itertools
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from cudalens.analysis.positions import split_lines
from cudalens.analysis.syntax_check import SyntaxBaseline, top_level_names
from cudalens.server.convert import Positions, workspace_edit
from cudalens.server.edit_check import EditRefused, edited_text

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

    def text_edit(self, codec: PositionCodec) -> types.TextEdit:
        pos = Positions(split_lines(self.original), codec)
        if self.end_line < pos.line_count:
            end = types.Position(self.end_line, 0)
        else:  # the last line has no line end: its end, in the client's units
            end = types.Position(len(pos.lines) - 1, codec.client_num_units(pos.lines[-1]))
        return types.TextEdit(types.Range(types.Position(self.start_line, 0), end), self.new_text)

    def edit(self, codec: PositionCodec, document_changes: bool) -> types.WorkspaceEdit:
        return workspace_edit(self.uri, self.version, [self.text_edit(codec)], document_changes)

    def new_document(self) -> str:
        lines = split_lines(self.original)
        return "".join(lines[: self.start_line]) + self.new_text + "".join(lines[self.end_line:])

    def check(self, codec: PositionCodec, syntax_path: str) -> None:
        """EditRefused unless the edit, applied as the client applies it, gives `new_document()` and a file
        that parses as well as the original (`syntax_path` names the file's kind: `.py` or CUDA)."""
        pos = Positions(split_lines(self.original), codec)
        if edited_text(pos, [self.text_edit(codec)]) != self.new_document():
            raise EditRefused("the edit would not replace the lines it was made for")
        if not SyntaxBaseline(self.original, syntax_path).accepts(self.new_document()):
            raise EditRefused("the edited file would not parse")

    def diff(self) -> str:
        name = Path(self.path).name
        return "".join(difflib.unified_diff(
            split_lines(self.original), split_lines(self.new_document()),
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
    return Offer(new_id(), uri, path, version, text, 0, len(split_lines(text)), new_text, summary)


def is_whole_file(reply: str, text: str, first: int, last: int, syntax_path: str) -> bool:
    """True when `reply` defines something that `text` defines outside its 0-based lines `first..last` (the
    lines the reply was asked to replace): then it is the whole file, not those lines."""
    outside = {name for name, line in top_level_names(text, syntax_path).items() if not first < line <= last + 1}
    return not outside.isdisjoint(top_level_names(reply, syntax_path))


def reply_offer(uri: str, path: str, version: int | None, text: str, first: int, last: int, reply: str,
                summary: str, syntax_path: str) -> Offer:
    """The Coder's reply to "rewrite lines first..last" as an edit: of the whole file when it is one."""
    new = reply if reply.endswith("\n") else reply + "\n"
    if is_whole_file(reply, text, first, last, syntax_path):
        return whole_document(uri, path, version, text, new, summary)
    return Offer(new_id(), uri, path, version, text, first, last + 1, new, summary)


def new_id() -> str:
    return f"cudalens-{next(_IDS)}"


@dataclass
class Offers:
    by_id: dict[str, Offer] = field(default_factory=dict)

    def add(self, offer: Offer, codec: PositionCodec, syntax_path: str) -> Offer:
        """Hold `offer` once it passes `Offer.check`; EditRefused (the reason for the user) otherwise."""
        offer.check(codec, syntax_path)
        self.by_id[offer.id] = offer
        return offer

    def get(self, offer_id: object) -> Offer | None:
        return self.by_id.get(offer_id) if isinstance(offer_id, str) else None

    def drop(self, offer_id: str) -> None:
        self.by_id.pop(offer_id, None)


def stale_reason(offer: Offer, version: int | None, text: str | None, in_sync: bool = True) -> str | None:
    """Why `offer` may not be applied to the document as it is now, or None."""
    name = Path(offer.path).name
    if text is None:
        return f"cudalens: {name} is no longer open; the proposal was not applied"
    if not in_sync:
        return (f"cudalens: the server's copy of {name} may differ from the editor's (a change did not fit); "
                "the proposal was not applied — reopen the file and run it again")
    if version != offer.version or text != offer.original:
        return (f"cudalens: {name} changed since the proposal was made (version {offer.version} → {version}); "
                "it was not applied — run it again on the current text")
    return None
