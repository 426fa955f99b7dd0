"""`path:line:col: CODE message`, one finding a line, then a summary line (as ruff prints it). The path and
the message are the repository's text: control characters in them are escaped, so each finding stays one
line of the log."""

from __future__ import annotations

from cudalens.analysis.findings import Finding
from cudalens.cli.escape import printable


def _plural(count: int) -> str:
    return f"{count} finding{'s' if count != 1 else ''}"


def summary(remaining: int, fixed: int = 0) -> str:
    if fixed:
        return f"Found {_plural(remaining + fixed)} ({fixed} fixed, {remaining} remaining)."
    if remaining == 0:
        return "All checks passed!"
    return f"Found {_plural(remaining)}."


def render(findings: list[Finding], fixed: int = 0) -> str:
    lines = [f"{printable(f.path)}:{f.span.line}:{f.span.column}: {f.code} {printable(f.message)}" for f in findings]
    if lines:
        lines.append("")
    lines.append(summary(len(findings), fixed))
    fixable = sum(1 for f in findings if f.fix is not None and f.fix.is_safe and f.fix.edits)
    if fixable:
        lines.append(f"[*] {fixable} fixable with the `--fix` option.")
    return "\n".join(lines) + "\n"
