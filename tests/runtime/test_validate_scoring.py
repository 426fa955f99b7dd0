"""validate's scoring: static hints against hardware-flagged lines."""

from __future__ import annotations

import pytest

from cudalens.analysis.findings import Finding, Severity, Span
from cudalens.profiler import validate
from cudalens.worker.child.results import LineCounters, NcuProfile, SanitizerIssue, SanitizerResult


def hint(code: str, line: int, end_line: int | None = None) -> Finding:
    return Finding("k.cu", code, "r", Severity.WARNING, "m", Span(line, 1, end_line or line, 5))


def test_score_math():
    s = validate.score("coalescing", [{3}, {7, 8}, {20}], {3, 8, 11, 12})
    assert (s.hints, s.confirmed, s.flagged, s.found) == (3, 2, 4, 2)
    assert s.precision == pytest.approx(2 / 3)
    assert s.recall == pytest.approx(0.5)


def test_undefined_ratios_are_none():
    s = validate.score("races", [], set())
    assert s.precision is None and s.recall is None
    unmeasured = validate.score("races", [{1}], {1}, measured=False)
    assert unmeasured.precision is None and unmeasured.confirmed == 0


def test_compare_per_category():
    profile = NcuProfile(lines=(
        LineCounters("k.cu", 8, global_sectors=4718592, global_sectors_ideal=1048576, global_requests=262144),
        LineCounters("k.cu", 9, global_sectors=100, global_sectors_ideal=100),
        LineCounters("k.cu", 12, shared_wavefronts=4096, shared_wavefronts_ideal=128),
        LineCounters("k.cu", 14, inst_executed=100, thread_inst_executed=1600),
    ))
    races = SanitizerResult("racecheck", (
        SanitizerIssue("racecheck", "race", "m", "k.cu", 20, other_file="k.cu", other_line=21),
    ))
    findings = [hint("CL101", 8), hint("CL102", 9), hint("CL301", 12), hint("CL303", 21), hint("CL201", 30)]
    result = validate.compare("k.cu", "\n" * 40, findings, profile, races)
    by = {s.category: s for s in result.scores}
    assert (by["coalescing"].precision, by["coalescing"].recall) == (0.5, 1.0)
    assert (by["bank-conflicts"].precision, by["bank-conflicts"].recall) == (1.0, 1.0)
    assert (by["divergence"].precision, by["divergence"].recall) == (0.0, 0.0)
    assert (by["races"].precision, by["races"].recall) == (1.0, 0.5)


def test_unmeasured_files_do_not_count():
    findings = [hint("CL101", 8)]
    missing = validate.compare("k.cu", "x\n", findings, NcuProfile(error="ncu not found"), None)
    assert missing.notes == ("ncu: ncu not found",)
    measured = validate.compare("k.cu", "x\n", findings, NcuProfile(lines=(LineCounters("k.cu", 8, global_sectors=8, global_sectors_ideal=2),)), None)
    report = validate.summarize([missing, measured])
    totals = {t.category: t for t in report.totals}
    assert totals["coalescing"].hints == 1 and totals["coalescing"].precision == 1.0
    assert totals["races"].precision is None
    table = report.table()
    assert "coalescing" in table and "100%" in table
    assert report.to_json()["totals"][0]["precision"] == 1.0
