"""A verdict as hover markdown and as CL910 findings (what the server and the CLI show)."""

from __future__ import annotations

from cudalens.agents.judge.verdict import Verdict
from cudalens.analysis.findings import Finding, Related, Severity, Span
from cudalens.analysis.rules.judge_verdict import JudgeVerdict


def render_markdown(v: Verdict) -> str:
    label = {"failing": "Judge: failing", "measured": "Judge", "predicted": "Judge (predicted, no GPU run)"}[
        v.status
    ]
    who = f" `{v.kernel}`" if v.kernel else ""
    out = [f"**{label}{who}** — {v.summary}", ""]
    if v.status == "failing":
        out += [
            f"- **Critical issue:** {v.critical_issue}",
            f"- **Why it matters:** {v.why_it_matters}",
            f"- **Minimal fix:** {v.fix_hint}",
        ]
    else:
        if v.bottleneck:
            out.append(f"- **Bottleneck:** {v.bottleneck}-bound")
        if v.speedup is not None:
            out.append(f"- **Speed vs PyTorch:** {v.speedup:.2f}×")
        if v.roofline:
            out.append(f"- **Roofline:** {v.roofline.removeprefix('roofline: ')}")
        out.append(f"- **Next step:** {v.method_title}")
        out += [f"  {i}. {step}" for i, step in enumerate(v.plan, 1)]
    if v.evidence:
        out += ["", "| evidence | value | meaning | line |", "|---|---|---|---|"]
        for e in v.evidence:
            value = f"{e.value:.3g}" if isinstance(e.value, float) else str(e.value)
            meaning = e.meaning.replace("|", "\\|")
            out.append(f"| `{e.metric}` | {value.replace('|', '/')} | {meaning} | {e.line or ''} |")
    if v.predicted:
        out += ["", "_Predicted from the kernel's structure; run Profile on a GPU for a measured verdict._"]
    return "\n".join(out)


def verdict_findings(v: Verdict, path: str, kernel_span: Span) -> list[Finding]:
    """One CL910 finding on the kernel's name, with related locations at the lines the evidence points to."""
    severity = {"failing": Severity.WARNING, "measured": Severity.INFO, "predicted": Severity.HINT}[v.status]
    message = f"Judge{' (predicted)' if v.predicted else ''}: {v.summary}"
    if v.status == "failing" and v.fix_hint:
        message += f". Fix: {v.fix_hint}"
    related = tuple(
        Related(Span(e.line, 1, e.line, 1), f"{e.shown()} ({e.meaning})")
        for e in v.evidence
        if e.line is not None
    )
    evidence = tuple(
        (e.metric, e.value if isinstance(e.value, (int, float)) else str(e.value)) for e in v.evidence
    )
    return [
        Finding(
            path, JudgeVerdict.code, JudgeVerdict.name, severity, message, kernel_span, v.kernel, evidence=evidence,
            related=related
        )
    ]
