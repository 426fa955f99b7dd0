"""`cudalens validate`: the static hints against what the GPU measured on the same files, per category.

A static hint (a finding) is confirmed when the hardware flags one of its lines; a hardware-flagged line is
found when a hint covers it. Precision = confirmed hints / hints; recall = found lines / flagged lines.

| category | static | hardware |
|---|---|---|
| coalescing | CL1xx | ≥ 25 % of the line's global sectors are excess (ncu source counters) |
| bank-conflicts | CL301 | ≥ 20 % of the line's shared wavefronts are conflict replays |
| divergence | CL2xx | < 24 of 32 threads active per instruction, or divergent branches |
| races | CL303 | compute-sanitizer racecheck reports the line |
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cudalens.analysis.api import analyze_text
from cudalens.analysis.findings import Finding
from cudalens.profiler.ncu import line_hints
from cudalens.profiler.ncu.line_map import LineMapper
from cudalens.profiler.ncu.profile import ProfileRequest, profile_file
from cudalens.profiler.sanitizer import run_sanitizer
from cudalens.worker.child.results import LineCounters, NcuProfile, SanitizerResult

CATEGORIES = ("coalescing", "bank-conflicts", "divergence", "races")

_STATIC: dict[str, Callable[[str], bool]] = {
    "coalescing": lambda code: code.startswith("CL1"),
    "bank-conflicts": lambda code: code == "CL301",
    "divergence": lambda code: code.startswith("CL2"),
    "races": lambda code: code == "CL303",
}

_HARDWARE: dict[str, Callable[[LineCounters], bool]] = {
    "coalescing": lambda c: c.global_sectors > 0 and c.excess_sector_share >= line_hints.EXCESS_SECTOR_SHARE,
    "bank-conflicts": lambda c: c.shared_wavefronts > 0 and c.bank_conflict_share >= line_hints.BANK_CONFLICT_SHARE,
    "divergence": lambda c: c.divergent_branches > 0
    or (c.inst_executed > 0 and c.thread_inst_executed > 0 and c.threads_per_instruction < line_hints.THREADS_PER_INSTRUCTION),
}


@dataclass(frozen=True)
class CategoryScore:
    category: str
    hints: int  # static findings in the category
    confirmed: int  # of those, the ones the hardware agrees with
    flagged: int  # lines the hardware flags
    found: int  # of those, the ones a hint covers
    measured: bool = True  # False: the hardware side could not be measured (no ncu, no GPU...)

    @property
    def precision(self) -> float | None:
        return self.confirmed / self.hints if self.hints and self.measured else None

    @property
    def recall(self) -> float | None:
        return self.found / self.flagged if self.flagged and self.measured else None

    def __add__(self, other: CategoryScore) -> CategoryScore:
        return CategoryScore(
            self.category, self.hints + other.hints, self.confirmed + other.confirmed,
            self.flagged + other.flagged, self.found + other.found, self.measured or other.measured,
        )

    def to_json(self) -> dict:
        return {
            "category": self.category, "hints": self.hints, "confirmed": self.confirmed, "flagged": self.flagged,
            "found": self.found, "measured": self.measured, "precision": self.precision, "recall": self.recall,
        }


def score(category: str, hints: Sequence[set[int]], flagged: set[int], measured: bool = True) -> CategoryScore:
    """`hints`: the line sets of the static findings; `flagged`: the lines the hardware flags."""
    confirmed = sum(1 for lines in hints if lines & flagged)
    covered = set().union(*hints) if hints else set()
    return CategoryScore(category, len(hints), confirmed if measured else 0, len(flagged), len(flagged & covered), measured)


@dataclass(frozen=True)
class FileValidation:
    path: str
    scores: tuple[CategoryScore, ...]
    notes: tuple[str, ...] = ()
    findings: tuple[Finding, ...] = ()  # the static hints that were scored

    def to_json(self) -> dict:
        return {"path": self.path, "scores": [s.to_json() for s in self.scores], "notes": list(self.notes)}


@dataclass(frozen=True)
class ValidationReport:
    files: tuple[FileValidation, ...] = ()
    totals: tuple[CategoryScore, ...] = field(default_factory=tuple)

    def to_json(self) -> dict:
        return {"version": 1, "files": [f.to_json() for f in self.files], "totals": [t.to_json() for t in self.totals]}

    def table(self) -> str:
        rows = [("category", "hints", "confirmed", "hw lines", "found", "precision", "recall")]
        for t in self.totals:
            rows.append((t.category, str(t.hints), str(t.confirmed), str(t.flagged), str(t.found), _pct(t.precision), _pct(t.recall)))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(r, widths, strict=True))) for r in rows]
        lines.insert(1, "-" * len(lines[0]))
        return "\n".join(lines)


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:.0%}"


def compare(
    path: str, text: str, findings: Iterable[Finding], profile: NcuProfile | None, races: SanitizerResult | None
) -> FileValidation:
    """Scores one file from its static findings and the hardware's results (pure: no tools run here)."""
    findings = list(findings)
    notes: list[str] = []
    if profile is not None and profile.error:
        notes.append(f"ncu: {profile.error}")
    if races is not None and races.error:
        notes.append(f"racecheck: {races.error}")
    lines = list(profile.lines) if profile is not None and not profile.error else []
    ncu_ok = profile is not None and not profile.error
    race_lines: set[int] = set()
    race_ok = races is not None and not races.error
    if race_ok and races is not None:
        mapper = LineMapper(path, text)
        for issue in races.issues:
            if issue.kind != "race":
                continue
            for file, line in ((issue.file, issue.line), (issue.other_file, issue.other_line)):
                if line and (mapped := mapper.map(file, line)):
                    race_lines.add(mapped)
    scores = []
    for category in CATEGORIES:
        hints = [set(range(f.span.line, f.span.end_line + 1)) for f in findings if _STATIC[category](f.code)]
        if category == "races":
            scores.append(score(category, hints, race_lines, race_ok))
        else:
            flagged = {c.line for c in lines if _HARDWARE[category](c)}
            scores.append(score(category, hints, flagged, ncu_ok))
    return FileValidation(path, tuple(scores), tuple(notes), tuple(findings))


def validate_file(
    path: str, *, python: str = sys.executable, timeout: float = 300.0, racecheck: bool = True, use_cache: bool = True
) -> FileValidation:
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    findings = analyze_text(path, text).findings
    profile = profile_file(ProfileRequest(path=path, python=python, timeout=timeout, use_cache=use_cache))
    races = run_sanitizer(path, "racecheck", python=python, timeout=timeout) if racecheck else None
    return compare(path, text, findings, profile, races)


def summarize(files: Sequence[FileValidation]) -> ValidationReport:
    totals = []
    for i, category in enumerate(CATEGORIES):
        per_file = [f.scores[i] for f in files]
        total = CategoryScore(category, 0, 0, 0, 0, measured=False)
        for s in per_file:
            if s.measured:  # a file the hardware could not check says nothing about precision or recall
                total = total + s
        totals.append(total)
    return ValidationReport(tuple(files), tuple(totals))
