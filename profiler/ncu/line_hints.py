"""Per-line source counters → CL904 findings on the line ("78 % of this line's global sectors are excess")."""

from __future__ import annotations

from collections.abc import Iterable

from cudalens.analysis.findings import Finding, Severity
from cudalens.analysis.rules.profile_line_hint import ProfileLineHint
from cudalens.profiler.ncu.line_map import line_span
from cudalens.worker.child.results import LineCounters

# A line is worth a hint when its waste is at least this share of its own traffic...
EXCESS_SECTOR_SHARE = 0.25
BANK_CONFLICT_SHARE = 0.20
THREADS_PER_INSTRUCTION = 24.0
# ...and it carries at least this share of the kernel's traffic of that kind (the rest is noise).
KERNEL_SHARE = 0.01


def line_findings(path: str, text: str, lines: Iterable[LineCounters]) -> list[Finding]:
    lines = list(lines)
    totals = {
        "sectors": sum(x.global_sectors for x in lines),
        "wavefronts": sum(x.shared_wavefronts for x in lines),
        "inst": sum(x.inst_executed for x in lines),
    }
    source = text.splitlines()
    out: list[Finding] = []
    for c in lines:
        span = line_span(source, c.line)
        for message, severity, evidence in _hints(c, totals):
            out.append(ProfileLineHint.finding(path, message, span, severity, kernel=c.kernel or None, evidence=evidence))
    return out


def _hints(c: LineCounters, totals: dict[str, float]) -> list[tuple[str, Severity, tuple]]:
    hints = []
    if (
        c.global_sectors
        and c.excess_sector_share >= EXCESS_SECTOR_SHARE
        and c.global_sectors >= KERNEL_SHARE * totals["sectors"]
    ):
        per_req = (
            f" ({c.sectors_per_request:.1f} sectors/request, ideal {c.ideal_sectors_per_request:.1f})"
            if c.global_requests else ""
        )
        hints.append((
            f"{c.excess_sector_share:.0%} of this line's global-memory sectors are excess{per_req}: "
            "neighbouring threads do not read neighbouring addresses",
            Severity.WARNING if c.excess_sector_share >= 0.5 else Severity.INFO,
            (("sectors", c.global_sectors), ("ideal_sectors", c.global_sectors_ideal),
             ("sectors_per_request", round(c.sectors_per_request, 2)), ("excess_share", round(c.excess_sector_share, 3))),
        ))
    if (
        c.shared_wavefronts
        and c.bank_conflict_share >= BANK_CONFLICT_SHARE
        and c.shared_wavefronts >= KERNEL_SHARE * totals["wavefronts"]
    ):
        ways = c.shared_wavefronts / c.shared_wavefronts_ideal if c.shared_wavefronts_ideal else 0.0
        hints.append((
            f"{c.bank_conflict_share:.0%} of this line's shared-memory wavefronts are bank-conflict replays"
            + (f" ({ways:.1f}× the conflict-free count)" if ways else ""),
            Severity.WARNING if c.bank_conflict_share >= 0.5 else Severity.INFO,
            (("wavefronts", c.shared_wavefronts), ("ideal_wavefronts", c.shared_wavefronts_ideal),
             ("conflict_share", round(c.bank_conflict_share, 3))),
        ))
    if (
        c.inst_executed
        and c.thread_inst_executed
        and c.threads_per_instruction < THREADS_PER_INSTRUCTION
        and c.inst_executed >= KERNEL_SHARE * totals["inst"]
    ):
        hints.append((
            f"on average {c.threads_per_instruction:.1f} of 32 threads execute this line's instructions: "
            "the warp diverges or idles here",
            Severity.INFO,
            (("threads_per_instruction", round(c.threads_per_instruction, 2)), ("inst_executed", c.inst_executed)),
        ))
    return hints
