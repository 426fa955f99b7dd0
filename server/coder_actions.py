"""Code actions that call the agents: "Optimize kernel" on a kernel, "Fix with Coder" on a failing test (CL901),
"Ask Coder about this" on any finding. Each is a command; nothing is edited until the user applies a proposal."""

from __future__ import annotations

from collections.abc import Sequence

from lsprotocol import types

from cudalens.analysis.api import KernelInfo
from cudalens.analysis.findings import Finding, Span
from cudalens.server.commands import ASK_CODER, FIX_WITH_CODER, OPTIMIZE
from cudalens.server.convert import Positions, overlaps, to_diagnostic

REWRITE = types.CodeActionKind.RefactorRewrite


def coder_actions(
    uri: str, kernels: Sequence[KernelInfo], findings: Sequence[Finding], span: Span, pos: Positions,
    optimizable: bool = True,
) -> list[types.CodeAction]:
    """`optimizable`: the file is one Optimize works on (lens.py says which and why)."""
    actions = []
    for finding in findings:
        if not overlaps(finding.span, span):
            continue
        diagnostic = to_diagnostic(finding, uri, pos)
        if finding.code == "CL901":
            actions.append(types.CodeAction(
                title="Fix with Coder", kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic],
                command=types.Command(title="Fix with Coder", command=FIX_WITH_CODER, arguments=[uri, finding.kernel or ""]),
            ))
        range_json = {"start": {"line": diagnostic.range.start.line, "character": diagnostic.range.start.character},
                      "end": {"line": diagnostic.range.end.line, "character": diagnostic.range.end.character}}
        actions.append(types.CodeAction(
            title=f"Ask Coder about this ({finding.code})", kind=types.CodeActionKind.QuickFix,
            diagnostics=[diagnostic],
            command=types.Command(title="Ask Coder about this", command=ASK_CODER, arguments=[uri, range_json, finding.code]),
        ))
    names = [k.name for k in kernels if overlaps(k.name_span, span)] if optimizable else []
    line = pos.lines[span.line - 1] if 0 < span.line <= len(pos.lines) else ""
    if optimizable and not names and line.lstrip().startswith("class ModelNew"):  # a KernelBench solution without a kernel yet
        names = [""]
    for name in names:
        actions.append(types.CodeAction(
            title=f"Optimize kernel `{name}`" if name else "Optimize ModelNew", kind=REWRITE,
            command=types.Command(title="Optimize kernel", command=OPTIMIZE, arguments=[uri, name]),
        ))
    return actions
