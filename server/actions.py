"""Code actions: the rules' quick fixes, "Suppress CLxxx on this line", and `source.fixAll.cudalens`.

Every edit carries the document version it was computed for, so a client refuses it once the text changed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from lsprotocol import types

from cudalens.analysis.findings import Finding, Span
from cudalens.server.convert import Positions, overlaps, to_diagnostic, to_text_edits, workspace_edit

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

    def edit(self, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
        return workspace_edit(self.uri, self.version, edits, self.document_changes)


def wanted(only: Sequence[str] | None, kind: str) -> bool:
    """LSP `only` filters by kind prefix: `source.fixAll` asks for `source.fixAll.cudalens` too."""
    return not only or any(kind == k or kind.startswith(k + ".") for k in only)


def quick_fixes(findings: Iterable[Finding], span: Span, ctx: ActionContext) -> list[types.CodeAction]:
    actions = []
    for finding in findings:
        if finding.fix is None or not overlaps(finding.span, span):
            continue
        actions.append(
            types.CodeAction(
                title=f"{finding.fix.message} ({finding.code})",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[to_diagnostic(finding, ctx.uri, ctx.pos)],
                edit=ctx.edit(to_text_edits(finding.fix, ctx.pos)),
                is_preferred=finding.fix.is_safe,
            )
        )
    return actions


def suppression_edit(line_text: str, line: int, code: str, comment: str, pos: Positions) -> types.TextEdit:
    """Adds `code` to the line's `cudalens: ignore[...]` comment, or appends one at the end of the line."""
    text = line_text.rstrip("\r\n")
    existing = _SUPPRESSION.search(text)
    if existing is not None:
        codes = [c.strip() for c in existing.group(1).split(",") if c.strip()]
        if code in codes:
            codes.remove(code)
        at = existing.end(1)
        insert = (", " if codes else "") + code
        return types.TextEdit(types.Range(pos.to_lsp(line, at + 1), pos.to_lsp(line, at + 1)), insert)
    end = pos.to_lsp(line, len(text) + 1)
    return types.TextEdit(types.Range(end, end), f"  {comment} cudalens: ignore[{code}]")


def suppress_actions(findings: Iterable[Finding], span: Span, ctx: ActionContext) -> list[types.CodeAction]:
    actions, seen = [], set()
    lines = ctx.pos.lines
    for finding in findings:
        key = (finding.code, finding.span.line)
        if key in seen or not overlaps(finding.span, span) or finding.span.line > len(lines):
            continue
        seen.add(key)
        line = finding.span.line
        edit = suppression_edit(lines[line - 1], line, finding.code, ctx.comment_for_line(line), ctx.pos)
        actions.append(
            types.CodeAction(
                title=f"Suppress {finding.code} on this line",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[to_diagnostic(finding, ctx.uri, ctx.pos)],
                edit=ctx.edit([edit]),
            )
        )
    return actions


def fix_all(findings: Iterable[Finding], ctx: ActionContext) -> types.CodeAction | None:
    """All safe fixes whose edits do not overlap one another, as one edit."""
    chosen: list[Span] = []
    edits: list[types.TextEdit] = []
    for finding in sorted(findings, key=lambda f: f.span):
        fix = finding.fix
        if fix is None or not fix.is_safe:
            continue
        spans = [e.span for e in fix.edits]
        if any(overlaps(s, c) and s != c for s in spans for c in chosen) or any(s in chosen for s in spans):
            continue
        chosen.extend(spans)
        edits.extend(to_text_edits(fix, ctx.pos))
    if not edits:
        return None
    return types.CodeAction(title="cudalens: fix all safe problems", kind=FIX_ALL_KIND, edit=ctx.edit(edits))


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


def comment_marker(kind: str, embedded_sources: Sequence[tuple[str, int]]) -> Callable[[int], str]:
    """`//` in CUDA, including CUDA inside a Python string (a `#` there would be a preprocessor line);
    `#` on the other lines of a Python file."""
    if kind == "cuda":
        return lambda line: "//"
    regions = [(start, start + text.count("\n")) for text, start in embedded_sources]
    return lambda line: "//" if any(a <= line <= b for a, b in regions) else "#"
