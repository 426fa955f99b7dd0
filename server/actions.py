"""Code actions: the rules' quick fixes, "Suppress CLxxx on this line", and `source.fixAll.cudalens`.

Every edit carries the document version it was computed for, so a client refuses it once the text changed.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from lsprotocol import types

from cudalens.analysis.findings import Finding, Fix, Span
from cudalens.analysis.syntax_check import SyntaxBaseline
from cudalens.server.convert import Positions, overlaps, to_diagnostic, to_text_edits, workspace_edit
from cudalens.server.edit_check import check_edits

logger = logging.getLogger("cudalens.server")

FIX_ALL_KIND = "source.fixAll.cudalens"
KINDS = [types.CodeActionKind.QuickFix, FIX_ALL_KIND]
_SUPPRESSION = re.compile(r"cudalens:\s*ignore\[([^\]]*)\]")


@dataclass(frozen=True)
class ActionContext:
    uri: str
    version: int | None
    pos: Positions
    document_changes: bool  # the client takes versioned `documentChanges`
    comment_for_line: Callable[[int], str]  # "//" or "#" for a 1-based line
    syntax: SyntaxBaseline  # of the text `pos` describes

    def edit(self, title: str, edits: list[types.TextEdit], meant: Sequence[Span]) -> types.WorkspaceEdit | None:
        """The edit as offered, or None (logged) when it fails the checks of edit_check.py."""
        why = check_edits(self.pos, edits, self.syntax, meant)
        if why is not None:
            logger.warning("not offering %r on %s: %s", title, self.uri, why)
            return None
        return workspace_edit(self.uri, self.version, edits, self.document_changes)


def _spans(fix: Fix) -> list[Span]:
    return [edit.span for edit in fix.edits]


def wanted(only: Sequence[str] | None, kind: str) -> bool:
    """LSP `only` filters by kind prefix: `source.fixAll` asks for `source.fixAll.cudalens` too."""
    return not only or any(kind == k or kind.startswith(k + ".") for k in only)


def quick_fixes(findings: Iterable[Finding], span: Span, ctx: ActionContext) -> list[types.CodeAction]:
    actions = []
    for finding in findings:
        if finding.fix is None or not overlaps(finding.span, span):
            continue
        title = f"{finding.fix.message} ({finding.code})"
        edit = ctx.edit(title, to_text_edits(finding.fix, ctx.pos), _spans(finding.fix))
        if edit is None:
            continue
        actions.append(_quick_fix(title, finding, edit, ctx, preferred=finding.fix.is_safe))
    return actions


def _quick_fix(title: str, finding: Finding, edit: types.WorkspaceEdit, ctx: ActionContext,
               preferred: bool | None = None) -> types.CodeAction:
    return types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix,
                            diagnostics=[to_diagnostic(finding, ctx.uri, ctx.pos)], edit=edit, is_preferred=preferred)


def suppression_edit(line_text: str, line: int, code: str, comment: str, pos: Positions) -> tuple[types.TextEdit, Span]:
    """Adds `code` to the line's `cudalens: ignore[...]` comment, or appends one at the end of the line; and the
    (empty) span where it inserts."""
    text = line_text.rstrip("\r\n")
    existing = _SUPPRESSION.search(text)
    if existing is not None:
        codes = [c.strip() for c in existing.group(1).split(",") if c.strip()]
        if code in codes:
            codes.remove(code)
        at = existing.end(1)
        insert = (", " if codes else "") + code
        where = pos.to_lsp(line, at + 1)
        return types.TextEdit(types.Range(where, where), insert), Span(line, at + 1, line, at + 1)
    end = pos.to_lsp(line, len(text) + 1)
    span = Span(line, len(text) + 1, line, len(text) + 1)
    return types.TextEdit(types.Range(end, end), f"  {comment} cudalens: ignore[{code}]"), span


def suppress_actions(findings: Iterable[Finding], span: Span, ctx: ActionContext) -> list[types.CodeAction]:
    actions, seen = [], set()
    lines = ctx.pos.lines
    for finding in findings:
        key = (finding.code, finding.span.line)
        if key in seen or not overlaps(finding.span, span) or finding.span.line > len(lines):
            continue
        seen.add(key)
        line = finding.span.line
        edit, where = suppression_edit(lines[line - 1], line, finding.code, ctx.comment_for_line(line), ctx.pos)
        title = f"Suppress {finding.code} on this line"
        checked = ctx.edit(title, [edit], [where])
        if checked is None:
            continue
        actions.append(_quick_fix(title, finding, checked, ctx))
    return actions


def fix_all(findings: Iterable[Finding], ctx: ActionContext) -> types.CodeAction | None:
    """All safe fixes whose edits do not overlap one another, as one edit."""
    chosen: list[Span] = []
    edits: list[types.TextEdit] = []
    for finding in sorted(findings, key=lambda f: f.span):
        fix = finding.fix
        if fix is None or not fix.is_safe:
            continue
        spans = _spans(fix)
        if any(overlaps(s, c) and s != c for s in spans for c in chosen) or any(s in chosen for s in spans):
            continue
        chosen.extend(spans)
        edits.extend(to_text_edits(fix, ctx.pos))
    title = "cudalens: fix all safe problems"
    edit = ctx.edit(title, edits, chosen) if edits else None
    return types.CodeAction(title=title, kind=FIX_ALL_KIND, edit=edit) if edit is not None else None


def code_actions(
    findings: Sequence[Finding], span: Span, ctx: ActionContext, only: Sequence[str] | None
) -> list[types.CodeAction]:
    actions: list[types.CodeAction] = []
    if wanted(only, types.CodeActionKind.QuickFix):
        actions += quick_fixes(findings, span, ctx)
        actions += suppress_actions(findings, span, ctx)
    if wanted(only, FIX_ALL_KIND) and (everything := fix_all(findings, ctx)) is not None:
        actions.append(everything)
    return actions


def comment_marker(kind: str, embedded_sources: Sequence[tuple[str, int, int]]) -> Callable[[int], str]:
    """`//` in CUDA, including CUDA inside a Python string (a `#` there would be a preprocessor line), where a
    line ends inside the string; `#` on the other lines of a Python file, including the line a string ends on
    (its end is Python code)."""
    if kind == "cuda":
        return lambda line: "//"
    regions = [(start, end) for _, start, end in embedded_sources]
    return lambda line: "//" if any(a <= line < b for a, b in regions) else "#"
