"""Findings and fixes → lsprotocol types. The only module that knows both sides.

Findings count 1-based lines and 1-based *characters*; LSP counts 0-based lines and code units of the
negotiated encoding (UTF-16 unless the client chose another), so a line with `é` or `😀` before a finding
shifts the LSP column. `Positions` does that conversion for one text and never raises on out-of-range input.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from lsprotocol import types
from pygls.protocol import default_converter
from pygls.uris import from_fs_path
from pygls.workspace.position_codec import PositionCodec

from cudalens.analysis.findings import Finding, Fix, Severity, Span
from cudalens.analysis.positions import TextLines, without_line_end

SOURCE = "cudalens"
RULE_DOCS_URL = "https://github.com/cudalens/cudalens/blob/main/docs/rules.md#{anchor}"

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
    Severity.HINT: types.DiagnosticSeverity.Hint,
}
_TAGS = {"unnecessary": types.DiagnosticTag.Unnecessary, "deprecated": types.DiagnosticTag.Deprecated}


def rule_url(code: str) -> str:
    return RULE_DOCS_URL.format(anchor=code.lower())


@dataclass(frozen=True)
class Positions(TextLines):
    """Position conversion for one text: its lines with their line ends, split as LSP counts them
    (`analysis.positions.TextLines`), in the client's units."""

    codec: PositionCodec

    def to_lsp(self, line: int, column: int) -> types.Position:
        """1-based line and character column → LSP position, clamped into the text."""
        if not self.lines:
            return types.Position(0, 0)
        line0 = min(max(line - 1, 0), len(self.lines) - 1)
        if line - 1 >= len(self.lines):
            text = without_line_end(self.lines[-1])
            return types.Position(line0, self.codec.client_num_units(text))
        text = without_line_end(self.lines[line0])
        char0 = min(max(column - 1, 0), len(text))
        return types.Position(line0, self.codec.client_num_units(text[:char0]))

    def from_lsp(self, position: types.Position) -> tuple[int, int]:
        """LSP position → 1-based line and character column, clamped into the text."""
        if not self.lines:
            return 1, 1
        line0 = min(max(position.line, 0), len(self.lines) - 1)
        text = without_line_end(self.lines[line0])
        units = 0
        for index, char in enumerate(text):
            if units >= position.character:
                return line0 + 1, index + 1
            units += self.codec.client_num_units(char)
        return line0 + 1, len(text) + 1

    def offset(self, position: types.Position) -> int | None:
        """The index in the text that an LSP position denotes; None for a line past the last (see unit_index)."""
        line = position.line
        if line == len(self.lines) < self.line_count:
            return self.starts[-1]  # the empty line after the last line end
        if not 0 <= line < len(self.lines) or position.character < 0:
            return None
        return self.starts[line] + unit_index(without_line_end(self.lines[line]), position.character, self.codec)

    def range(self, span: Span) -> types.Range:
        return types.Range(self.to_lsp(span.line, span.column), self.to_lsp(span.end_line, span.end_column))

    def span(self, rng: types.Range) -> Span:
        (line, col), (end_line, end_col) = self.from_lsp(rng.start), self.from_lsp(rng.end)
        return Span(line, col, end_line, end_col)


def unit_index(line: str, units: int, codec: PositionCodec) -> int:
    """The index in `line` (without its line end) of a position `units` code units in. A position past the
    line's end means its end (LSP says so); one inside a character (half a surrogate pair) its start."""
    if line.isascii():
        return min(units, len(line))
    count = 0
    for index, char in enumerate(line):
        count += codec.client_num_units(char)
        if count > units:
            return index
    return len(line)


def overlaps(a: Span, b: Span) -> bool:
    """True when the spans share a character, or touch at a point (an empty span at a finding counts)."""
    return (a.line, a.column) <= (b.end_line, b.end_column) and (b.line, b.column) <= (a.end_line, a.end_column)


def to_diagnostic(finding: Finding, uri: str, pos: Positions, other: dict[str, Positions] | None = None) -> types.Diagnostic:
    """One Finding as an LSP Diagnostic. `other` maps paths of other open files to their Positions, for
    related information that points outside this document."""
    related = []
    for rel in finding.related:
        where = pos if rel.path in (None, finding.path) else (other or {}).get(rel.path)
        rel_uri = uri if rel.path in (None, finding.path) else path_uri(rel.path)
        rng = where.range(rel.span) if where is not None else _plain_range(rel.span)
        related.append(types.DiagnosticRelatedInformation(types.Location(rel_uri, rng), rel.message))
    return types.Diagnostic(
        range=pos.range(finding.span),
        message=finding.message,
        severity=_SEVERITY[finding.severity],
        code=finding.code,
        code_description=types.CodeDescription(href=rule_url(finding.code)),
        source=SOURCE,
        related_information=related or None,
        tags=[_TAGS[t] for t in finding.tags if t in _TAGS] or None,
    )


def path_uri(path: str) -> str:
    return from_fs_path(path) or path


def _plain_range(span: Span) -> types.Range:
    """A range in a file that is not open: columns taken as code units (exact for ASCII lines)."""
    return types.Range(
        types.Position(max(span.line - 1, 0), max(span.column - 1, 0)),
        types.Position(max(span.end_line - 1, 0), max(span.end_column - 1, 0)),
    )


def to_text_edits(fix: Fix, pos: Positions) -> list[types.TextEdit]:
    return [types.TextEdit(pos.range(edit.span), edit.new_text) for edit in fix.edits]


def workspace_edit(
    uri: str, version: int | None, edits: list[types.TextEdit], document_changes: bool = True
) -> types.WorkspaceEdit:
    """Edits checked against the document's version: a client rejects them once the text has moved on."""
    if not document_changes:
        return types.WorkspaceEdit(changes={uri: edits})
    doc = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
    return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(text_document=doc, edits=edits)])


_CONVERTER = default_converter()


def converter():
    """The one converter of the process: the protocol's too (each costs ≈ 15 ms of a new window's start)."""
    return _CONVERTER

# A diagnostic with its JSON text, as publishDiagnostics sends it (app.publish joins the texts).
Entry = tuple[types.Diagnostic, str]


def entry(diagnostic: types.Diagnostic) -> Entry:
    return diagnostic, json.dumps(_CONVERTER.unstructure(diagnostic))


class DiagnosticCache:
    """The diagnostics of one document's findings, kept across versions while a finding and the lines under it
    are unchanged: typing in one kernel leaves the other kernels' diagnostics as they were, already converted
    and already in JSON text (turning a few hundred attrs objects into JSON per keystroke costs ~10 ms; encoding
    1,128 diagnostics' dicts, 35 ms). A finding that is the very object of the last version (the analyzer reuses
    an unchanged kernel's) is found by identity, without hashing it and its evidence."""

    def __init__(self) -> None:
        self._last: dict[int, tuple[Finding, tuple, Entry]] = {}  # by id(finding); the finding keeps the id
        self._by_value: dict[tuple, Entry] | None = None  # the same, by value: made on the first miss

    def convert(self, findings: Sequence[Finding], uri: str, pos: Positions) -> list[Entry]:
        fresh: dict[int, tuple[Finding, tuple, Entry]] = {}
        out = []
        text_lines, count = pos.lines, len(pos.lines)
        for finding in findings:
            span = finding.span
            # the lines under it (a thousand findings an edit: the plain case without generators)
            lines = (text_lines[span.line - 1] if 0 < span.line <= count else None,
                     text_lines[span.end_line - 1] if 0 < span.end_line <= count else None)
            if finding.related:
                lines += tuple(_line(pos, n) for r in finding.related if r.path in (None, finding.path)
                               for n in (r.span.line, r.span.end_line))
            last = self._last.get(id(finding))
            if last is not None and last[0] is finding and last[1] == lines:
                found = last[2]
            else:
                found = self._known(finding, lines)
            if found is None:
                found = entry(to_diagnostic(finding, uri, pos))
            fresh[id(finding)] = (finding, lines, found)
            out.append(found)
        self._last, self._by_value = fresh, None
        return out

    def _known(self, finding: Finding, lines: tuple) -> Entry | None:
        if self._by_value is None:
            self._by_value = {}
            for f, ls, e in self._last.values():
                try:
                    self._by_value[(f, *ls)] = e
                except TypeError:  # a finding holding something unhashable: converted every time
                    pass
        try:
            return self._by_value.get((finding, *lines))
        except TypeError:
            return None


def _line(pos: Positions, line: int) -> str | None:
    return pos.lines[line - 1] if 0 < line <= len(pos.lines) else None
