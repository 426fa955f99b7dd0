"""Hover text: the kernel model on a kernel's name, the rule's documentation on a finding's range.

Plain functions from analysis results to Markdown strings; the handler wraps them in an LSP Hover.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from cudalens.analysis.api import KernelInfo, LaunchSite
from cudalens.analysis.codes import rule_info
from cudalens.analysis.findings import Finding, Span


def _contains(span: Span, line: int, column: int) -> bool:
    return (span.line, span.column) <= (line, column) <= (span.end_line, span.end_column)


def _dims(d: tuple[int, ...]) -> str:
    return "×".join(str(v) for v in d)


def _bytes(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KiB"


def _launch(site: LaunchSite) -> str:
    """As the analysis read the site (constants, `#define`d and `constexpr` sizes resolved); `?` is a size known
    only at run time."""
    grid = _dims(site.grid) if site.grid else "?"
    block = _dims(site.block) if site.block else "?"
    smem = f", {_bytes(site.dynamic_shared_bytes)} dynamic shared" if site.dynamic_shared_bytes else ""
    where = f"{site.path}:" if site.path else "line "
    return f"`<<<{grid}, {block}>>>`{smem} at {where}{site.span.line}"


def kernel_markdown(kernel: KernelInfo, findings: Sequence[Finding]) -> str:
    lines = [f"**`{kernel.name}`** — CUDA kernel{' (template)' if kernel.template else ''}", ""]
    if kernel.block:
        threads = kernel.block[0] * kernel.block[1] * kernel.block[2]
        lines.append(f"- block: {_dims(kernel.block)} = {threads} threads, {-(-threads // 32)} warps")
    elif any(site.block for site in kernel.launch_sites):
        lines.append("- block: differs between its launch sites")
    elif kernel.launch_sites:
        lines.append("- block: known only at run time at its launch sites (a `// cudalens: launch block=(32,8)` "
                     "line above the kernel says which to assume)")
    else:
        lines.append("- block: no launch found (a `// cudalens: launch block=(32,8)` line above the kernel says "
                     "which to assume)")
    if kernel.launch_bounds:
        lines.append(f"- `__launch_bounds__({', '.join(map(str, kernel.launch_bounds))})`")
    lines.append(f"- warp shape: {kernel.warp_shape}")
    shared = _bytes(kernel.static_shared_bytes) + " static" if kernel.static_shared_bytes else "no static"
    lines.append(f"- shared memory: {shared}{' + dynamic' if kernel.uses_dynamic_shared else ''}")
    if kernel.launch_sites:
        sites = kernel.launch_sites
        unknown = " (`?`: known only at run time)" if any(not s.grid or not s.block for s in sites) else ""
        lines.append("- launches: " + "; ".join(_launch(s) for s in sites) + unknown)
    else:
        lines.append("- launches: none found in this file")
    if kernel.features is not None:
        lines.append(f"- features: {kernel.features.summary()}")
    mine = [f for f in findings if f.kernel == kernel.name]
    lines += ["", f"**Findings** ({len(mine)})" if mine else "No findings."]
    lines += [f"- `{f.code}` line {f.span.line}: {f.message}" for f in mine]
    return "\n".join(lines)


def rule_markdown(finding: Finding, docs: Callable[[str], str | None]) -> str:
    doc = docs(finding.code)
    head = f"**{finding.code}** `{finding.rule}`: {finding.message}"
    if finding.evidence:
        head += "\n\n" + ", ".join(f"{k} = {v}" for k, v in finding.evidence_dict().items())
    return head + ("\n\n---\n\n" + doc if doc else "")


def rule_doc(code: str) -> str | None:
    info = rule_info(code)
    return info.doc if info is not None else None


def hover_markdown(
    kernels: Sequence[KernelInfo], findings: Sequence[Finding], line: int, column: int,
    docs: Callable[[str], str | None] = rule_doc, last_run: Callable[[KernelInfo], str | None] | None = None,
) -> str | None:
    """What to show at a 1-based position, or None. `last_run`: a kernel's "Last run" section, if any."""
    parts = [rule_markdown(f, docs) for f in findings if _contains(f.span, line, column)]
    for k in kernels:
        if _contains(k.name_span, line, column):
            extra = last_run(k) if last_run is not None else None
            parts.append(kernel_markdown(k, findings) + (f"\n\n{extra}" if extra else ""))
    return "\n\n---\n\n".join(parts) if parts else None
