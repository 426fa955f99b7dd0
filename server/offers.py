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

from cudalens.analysis.findings import Span
from cudalens.analysis.positions import LINE_BREAK, TextLines, split_lines, without_line_end
from cudalens.analysis.syntax_check import SyntaxBaseline, top_level_names
from cudalens.server.convert import Positions, workspace_edit
from cudalens.server.edit_check import EditRefused, check_edits, edited_text

_IDS = itertools.count(1)

# A request to the editor: show the proposal beside the document in its diff view (VS Code: `vscode.diff` against
# a virtual document). Only for a client that says it takes it: `experimental.cudalens.showProposal: true`.
SHOW_PROPOSAL_METHOD = "cudalens/showProposal"


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

    def span(self) -> Span:
        """The lines replaced, as the character span the edit must denote (to the end of the text for "to the
        end")."""
        text = TextLines.of(self.original)
        if self.end_line < text.line_count:
            return Span(self.start_line + 1, 1, self.end_line + 1, 1)
        return Span(self.start_line + 1, 1, len(text.lines), len(without_line_end(text.lines[-1])) + 1)

    def check(self, codec: PositionCodec, syntax_path: str) -> None:
        """EditRefused unless the edit passes the checks of every edit the server offers (edit_check.py: its
        range denotes the lines it replaces, in the client's units; the edited file parses as well as the
        original, `syntax_path` naming its kind, `.py` or CUDA), applied as the client applies it gives
        `new_document()`, and changes something."""
        pos = Positions(split_lines(self.original), codec)
        edit = self.text_edit(codec)
        why = check_edits(pos, [edit], SyntaxBaseline(self.original, syntax_path), [self.span()])
        if why is None and edited_text(pos, [edit]) != self.new_document():
            why = "the edit would not replace the lines it was made for"
        if why is None and self.new_document() == self.original:
            why = "it changes nothing"
        if why is not None:
            raise EditRefused(why)

    def diff(self) -> str:
        name = Path(self.path).name
        return "".join(difflib.unified_diff(
            split_lines(self.original), split_lines(self.new_document()),
            f"a/{name}", f"b/{name}",
        ))

    def show_params(self) -> dict[str, str]:
        """`cudalens/showProposal`'s params: the document, the proposal's id and its whole new text, a title."""
        return {"uri": self.uri, "id": self.id, "text": self.new_document(),
                "title": f"{Path(self.path).name} ↔ {self.summary}"}

    def diff_file(self, folder: Path | None) -> Path:
        """The diff in a file the editor can show (in the run's log folder when there is one)."""
        if folder is None:
            folder = Path(tempfile.mkdtemp(prefix="cudalens-offer-"))
        target = folder / f"{Path(self.path).stem}-{self.id}.diff"
        target.write_text(self.diff(), encoding="utf-8")
        return target


def shows_proposals(capabilities: types.ClientCapabilities) -> bool:
    """Whether the client takes `cudalens/showProposal` (it says so under `experimental.cudalens`)."""
    experimental = capabilities.experimental
    ours = experimental.get("cudalens") if isinstance(experimental, dict) else None
    return isinstance(ours, dict) and ours.get("showProposal") is True


def whole_document(uri: str, path: str, version: int | None, text: str, new_text: str, summary: str) -> Offer:
    return Offer(new_id(), uri, path, version, text, 0, len(split_lines(text)), new_text, summary)


def is_whole_file(reply: str, text: str, first: int, last: int, syntax_path: str) -> bool:
    """True when `reply` defines something that `text` defines outside its 0-based lines `first..last` (the
    lines the reply was asked to replace): then it is the whole file, not those lines."""
    outside = {name for name, line in top_level_names(text, syntax_path).items() if not first < line <= last + 1}
    return not outside.isdisjoint(top_level_names(reply, syntax_path))


def reply_offer(uri: str, path: str, version: int | None, text: str, first: int, last: int, reply: str,
                summary: str, syntax_path: str) -> Offer:
    """The Coder's reply to "rewrite lines first..last" as an edit: of the whole file when it is one. Either
    way fitted into what it replaces (`fitted`), so that only the lines the Coder rewrote change."""
    lines = split_lines(text)
    if is_whole_file(reply, text, first, last, syntax_path):
        return whole_document(uri, path, version, text, fitted(reply, text, line_end(text)), summary)
    new = fitted(reply, "".join(lines[first : last + 1]), line_end(text))
    return Offer(new_id(), uri, path, version, text, first, last + 1, new, summary)


def fitted(reply: str, replaced: str, eol: str) -> str:
    """`reply` as the replacement of the whole lines `replaced`: a code block's own blank lines at its start
    and end dropped (a block that ends with an empty line put one more after the kernel), those of `replaced`
    kept; every line end `eol`, the text's; and no line end after the last line where `replaced` has none (the
    end of a file without one)."""
    old = split_lines(replaced)
    core = [without_line_end(line) for line in split_lines(reply)]
    while core and not core[-1].strip():
        core.pop()
    while core and not core[0].strip():
        core.pop(0)
    lead = next((i for i, line in enumerate(old) if line.strip()), len(old))
    trail = next((i for i, line in enumerate(reversed(old[lead:])) if line.strip()), 0)
    body = "".join(line + eol for line in core)
    if old and not old[-1].endswith(("\n", "\r")) and trail == 0:
        body = body[: len(body) - len(eol)]  # the last line of a file that ends without a line end
    return "".join(old[:lead]) + body + "".join(old[len(old) - trail :])


def line_end(text: str) -> str:
    """The text's line end: that of its first line (`\n` for a text of one line)."""
    found = LINE_BREAK.search(text)
    return found.group() if found else "\n"


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
