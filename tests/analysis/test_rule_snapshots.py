"""Snapshots of every finding of every rule fixture, whole: range, code, severity, message, evidence, related
places and the fix as the diff it makes (ruff's snapshot tests are the model). `test_rule_fixtures.py` says which
lines carry which codes; this pins what the user reads, so a change of any message, range or fix shows as a diff
in review.

A snapshot lives beside its fixture (`fixtures/CL2_divergence.cu.snap`). After an intended change, rewrite
them with `CUDALENS_UPDATE_SNAPSHOTS=1 pytest tests/analysis/test_rule_snapshots.py` and read the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cudalens.analysis.api import analyze_text
from cudalens.analysis.codes import static_rules
from cudalens.analysis.config import AnalysisConfig
from cudalens.analysis.findings import Finding, Span
from cudalens.cli.fixes import apply_fixes, unified_diff

FIXTURES = Path(__file__).parent / "fixtures"
SOURCES = sorted(p for p in FIXTURES.iterdir() if p.suffix in (".cu", ".cuh", ".py"))
UPDATE = os.environ.get("CUDALENS_UPDATE_SNAPSHOTS") == "1"


def _where(span: Span) -> str:
    return f"{span.line}:{span.column}-{span.end_line}:{span.end_column}"


def render(name: str, text: str, finding: Finding) -> str:
    lines = [f"{_where(finding.span)} {finding.code} {finding.rule} {finding.severity.value}"
             + (f" in {finding.kernel}" if finding.kernel else ""),
             f"  {finding.message}"]
    if finding.evidence:
        lines.append("  evidence: " + ", ".join(f"{k}={v}" for k, v in finding.evidence))
    for related in finding.related:
        lines.append(f"  related {related.path or 'here'} {_where(related.span)}: {related.message}")
    if finding.fix is not None:
        lines.append(f"  fix ({finding.fix.applicability}): {finding.fix.message}")
        after = apply_fixes(text, [finding], unsafe=True).text
        lines += ["    " + line for line in unified_diff(name, text, after).splitlines()]
    return "\n".join(lines)


def snapshot(path: Path) -> str:
    text = path.read_text()
    report = analyze_text(path.name, text, AnalysisConfig(min_severity="hint"))  # hint-level rules too
    return "".join(render(path.name, text, f) + "\n" for f in report.findings) + "".join(
        f"internal error: {e}\n" for e in report.errors)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_findings_match_their_snapshot(path: Path) -> None:
    stored = path.with_name(path.name + ".snap")
    now = snapshot(path)
    if UPDATE:
        stored.write_text(now)
    assert stored.is_file(), f"no snapshot: run with CUDALENS_UPDATE_SNAPSHOTS=1 to write {stored.name}"
    assert now == stored.read_text()


def test_every_static_rule_has_a_snapshot_with_its_findings():
    snapshots = "".join(p.with_name(p.name + ".snap").read_text() for p in SOURCES
                        if p.with_name(p.name + ".snap").is_file())
    missing = [r.code for r in static_rules() if f" {r.code} " not in snapshots]
    assert not missing, f"no fixture shows a finding of {missing}"
