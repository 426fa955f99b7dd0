"""`cudalens check --fix`: apply the findings' fixes to a document's text.

Safe fixes only, unless unsafe ones are asked for. Fixes that overlap an earlier one are left for the next run
(as ruff does), and a fix is applied whole or not at all. Positions are counted in LSP's line model (`\n`,
`\r\n` and a lone `\r` end a line: analysis/positions.TextLines), as the analyzer counts them and the server's
edits use them; file_check.py checks the result before it writes it. Pure: text in, text out.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from cudalens.analysis.findings import Finding, Span
from cudalens.analysis.positions import TextLines


@dataclass(frozen=True)
class FixOutcome:
    text: str
    fixed: tuple[Finding, ...]  # the findings whose fix was applied


def _range(lines: TextLines, span: Span) -> tuple[int, int] | None:
    begin = lines.char_offset(span.line, span.column)
    end = lines.char_offset(span.end_line, span.end_column)
    return None if begin is None or end is None or end < begin else (begin, end)


def applicable(finding: Finding, unsafe: bool) -> bool:
    return finding.fix is not None and bool(finding.fix.edits) and (finding.fix.is_safe or unsafe)


def apply_fixes(text: str, findings: list[Finding], unsafe: bool = False) -> FixOutcome:
    lines = TextLines.of(text)
    taken: list[tuple[int, int]] = []
    chosen: list[tuple[Finding, list[tuple[int, int, str]]]] = []
    fixes = [(f, f.fix) for f in findings if f.fix is not None and applicable(f, unsafe)]
    # the fix that starts first wins an overlap, as in ruff
    for finding, fix in sorted(fixes, key=lambda pair: min(e.span for e in pair[1].edits)):
        edits = []
        for edit in fix.edits:
            where = _range(lines, edit.span)
            if where is None:
                break
            edits.append((*where, edit.new_text))
        else:
            clash = any((b < e2 and b2 < e) or b == b2 for b, e, _ in edits for b2, e2 in taken)
            if not clash:
                taken += [(b, e) for b, e, _ in edits]
                chosen.append((finding, edits))
    pieces = sorted((edit for _, edits in chosen for edit in edits), key=lambda e: e[0], reverse=True)
    for begin, end, new in pieces:
        text = text[:begin] + new + text[end:]
    return FixOutcome(text, tuple(f for f, _ in chosen))


def unified_diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{path}", f"b/{path}"
    )
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
