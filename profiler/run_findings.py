"""Run-time results → findings: CL901 test failure, CL902 crash, CL903 slower than reference on the kernel, and
the anti-cheat findings (CL906–CL909, CL911, worker/child/anti_cheat.py) at their lines. `cudalens test`, `cudalens
check --test` and the save-time test all turn a `test` job's outcome into findings here.
(CL904 per-line profile hints: `cudalens.profiler.ncu.line_hints`; CL905 sanitizer: `cudalens.profiler.sanitizer`.)"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from cudalens.analysis.api import KernelInfo, analyze_text
from cudalens.analysis.codes import rule_class
from cudalens.analysis.config import AnalysisConfig
from cudalens.analysis.file_kinds import is_cuda_source
from cudalens.analysis.findings import Finding, Severity, Span
from cudalens.analysis.rule_base import Rule
from cudalens.analysis.rules.kernel_crash import KernelCrash
from cudalens.analysis.rules.slower_than_reference import SlowerThanReference
from cudalens.analysis.rules.test_failure import TestFailure
from cudalens.profiler import processes
from cudalens.profiler.ncu.line_map import line_span
from cudalens.worker.child.lib import problem_loader
from cudalens.worker.child.protocol import JobResult
from cudalens.worker.child.results import CheatFinding, TestResult, TimingResult
from cudalens.worker.run_job import run_job

_MODEL_NEW = re.compile(r"^\s*class\s+ModelNew\b", re.MULTILINE)
_GLOBAL = re.compile(r"__global__\s+(?:\w+\s+)*?(\w+)\s*\(")


def anchor(path: str, text: str, kernels: Sequence[KernelInfo] | None = None) -> tuple[Span, str | None]:
    """Where a whole-file result is shown: the first kernel's name, else `class ModelNew`, else line 1."""
    if kernels:
        return kernels[0].name_span, kernels[0].name
    if m := _GLOBAL.search(text):
        return _span_at(text, m.start(1), m.end(1)), m.group(1)
    if m := _MODEL_NEW.search(text):
        start = m.start() + len(m.group(0)) - len("ModelNew")
        return _span_at(text, start, start + len("ModelNew")), None
    first = text.splitlines()[0] if text else ""
    return Span(1, 1, 1, len(first) + 1), None


def _span_at(text: str, start: int, end: int) -> Span:
    line = text.count("\n", 0, start) + 1
    col = start - (text.rfind("\n", 0, start) + 1) + 1
    return Span(line, col, line, col + (end - start))


def test_findings(path: str, text: str, config: AnalysisConfig | None = None) -> list[Finding]:
    """The `cudalens check --test` hook: runs the file's correctness test in the worker when the file has
    something to test and a GPU is present; nothing otherwise (pre-commit on a machine without a GPU)."""
    if not has_test(path, text) or processes.which("nvidia-smi") is None:
        return []
    outcome = run_job("test", {"path": path}, timeout_s=600.0)
    return outcome_findings(path, text, outcome, analyze_text(path, text, config).kernels)



def no_gpu_message(what: str, name: str, reason: str) -> str:
    """What the editor and the terminal say when `what` ("testing", "profiling") cannot run here: one line."""
    return f"cudalens: {what} {name} needs an NVIDIA GPU, and this machine has none: {reason}"


def has_test(path: str, text: str) -> bool:
    """A KernelBench solution (`ModelNew`) or a `.cu` with a reference (directive or sibling `_ref.py`)."""
    if path.endswith(".py"):
        return "ModelNew" in text
    if is_cuda_source(path):
        return problem_loader.reference_for(Path(path), text, None) is not None
    return False


def outcome_findings(
    path: str, text: str, outcome: JobResult, kernels: Sequence[KernelInfo] | None = None
) -> list[Finding]:
    """Findings for a `test` job's outcome (the CLI's `--test`, `cudalens test`, the server on save)."""
    span, kernel = anchor(path, text, kernels)

    def finding(rule: type[Rule], severity: Severity, message: str, evidence: tuple = ()) -> Finding:
        return rule.finding(path, message, span, severity, kernel=kernel, evidence=evidence)

    reported = outcome.payload.get("test") or {}
    result = TestResult.from_json(reported) if reported else None
    cheats = [] if result is None else [cheat_finding(path, text, c, span, kernel) for c in result.cheats]
    if reported.get("status") == "crashed":  # the job saw the crash itself: its message says where
        return [finding(KernelCrash, Severity.ERROR, reported.get("message") or "the kernel crashed"), *cheats]
    if outcome.status in ("crash", "timeout"):
        what = "did not finish in time" if outcome.status == "timeout" else "crashed the worker"
        detail = _last_line(outcome.error)
        return [finding(KernelCrash, Severity.ERROR, f"the kernel {what}" + (f": {detail}" if detail else ""))]
    if outcome.context_broken and not cheats:  # a broken CUDA context the job did not explain
        return [finding(KernelCrash, Severity.ERROR, "the kernel crashed the worker")]
    if outcome.status == "cancelled":
        return []
    if outcome.status == "error" or result is None:
        return [finding(TestFailure, Severity.ERROR, f"the test could not run: {_last_line(outcome.error)}")]
    if result.status == "passed":
        if not result.degenerate:
            return cheats
        return [finding(TestFailure, Severity.INFO,
                        "the test passed but cannot tell right from wrong: " + "; ".join(result.degenerate)), *cheats]
    failed = result.first_failed_trial
    if result.status == "failed" and cheats and (failed is None or (not failed.error and failed.first_failure is None)):
        return cheats  # it failed for what the anti-cheat findings say, at their lines
    evidence: tuple = ()
    if failed and (bad := failed.first_failure) is not None:
        evidence = (("trial", failed.trial), ("seed", failed.seed), ("mismatches", bad.mismatches),
                    ("max_abs_error", bad.max_abs_error), ("max_rel_error", bad.max_rel_error))
    return [finding(TestFailure, Severity.ERROR, result.message or result.status, evidence), *cheats]


def cheat_finding(path: str, text: str, cheat: CheatFinding, whole_file: Span, kernel: str | None) -> Finding:
    """An anti-cheat finding at its line (on the kernel's name when it has none: a run-time finding)."""
    span = line_span(text.splitlines(), cheat.line) if cheat.line > 0 else whole_file
    severity = Severity.ERROR if cheat.severity == "reject" else Severity.WARNING
    return Finding(path, cheat.code, rule_class(cheat.code).name, severity, cheat.message, span, kernel=kernel,
                   evidence=(("check", cheat.check),))


def timing_findings(
    path: str, text: str, timing: TimingResult, kernels: Sequence[KernelInfo] | None = None
) -> list[Finding]:
    """CL903 when the candidate is slower than its baseline, the eager reference or torch.compile of it (the
    timing's warnings ride along)."""
    if not timing.speedup or timing.speedup >= 1.0:
        return []
    span, kernel = anchor(path, text, kernels)
    baseline = timing.baseline_timing
    noisy = "; ".join(timing.candidate.warnings + baseline.warnings)
    lo, hi = timing.speedup_interval
    against = "the PyTorch reference" if timing.baseline == "eager" else "torch.compile of the PyTorch reference"
    message = (
        f"{1 / timing.speedup:.3g}× slower [{1 / hi:.3g}–{1 / lo:.3g}] than {against} (median "
        f"{timing.candidate.median:.4g} ms vs {baseline.median:.4g} ms)" + (f"; {noisy}" if noisy else "")
    )
    evidence: tuple = (("speedup", round(timing.speedup, 3)), ("speedup_low", round(lo, 3)),
                       ("speedup_high", round(hi, 3)), ("candidate_ms", timing.candidate.median),
                       ("reference_ms", baseline.median), ("baseline", timing.baseline))
    if timing.candidate.kernel_ms is not None:
        evidence += (("candidate_kernel_ms", timing.candidate.kernel_ms),)
    return [SlowerThanReference.finding(path, message, span, kernel=kernel, evidence=evidence)]


def _last_line(text: str | None) -> str:
    lines = [x for x in (text or "").strip().splitlines() if x.strip()]
    return lines[-1].strip() if lines else ""
