"""`path:line:col: CODE message`, one finding a line, then a summary line (as ruff prints it)."""

from __future__ import annotations

from cudalens.analysis.findings import Finding


def summary(count: int) -> str:
    if count == 0:
        return "All checks passed!"
    return f"Found {count} finding{'s' if count != 1 else ''}."


def render(findings: list[Finding]) -> str:
    lines = [f"{f.path}:{f.span.line}:{f.span.column}: {f.code} {f.message}" for f in findings]
    if lines:
        lines.append("")
    lines.append(summary(len(findings)))
    return "\n".join(lines) + "\n"
