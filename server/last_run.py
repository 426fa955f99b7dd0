"""The last on-save run of a document, as text: a "Last run" section for a kernel's hover and a badge for its
code lens (`✓ 5/5 · 1.8× vs PyTorch`)."""

from __future__ import annotations

from cudalens.analysis.api import KernelInfo
from cudalens.analysis.config import AnalysisConfig
from cudalens.profiler.compile_findings import launch_shapes, resources_summary
from cudalens.server.pipeline_on_save import LastRun

TOP_HINTS = 3


def badge(run: LastRun | None) -> str | None:
    if run is None or run.test is None:
        return None
    test = run.test
    n = len(test.trials)
    if test.passed:
        text = f"✓ {n}/{n}"
    else:
        passed = sum(t.passed for t in test.trials)
        text = f"✗ {test.status}" + (f" {passed}/{n}" if n else "")
    if run.timing is not None and run.timing.speedup == run.timing.speedup:  # not NaN
        text += f" · {run.timing.speedup:.2g}× vs PyTorch"
    return text


def markdown(run: LastRun | None, kernel: KernelInfo, path: str) -> str | None:
    """The "Last run" section of `kernel`'s hover, or None when nothing ran for it."""
    if run is None:
        return None
    lines = []
    if run.compile is not None:
        shape = launch_shapes(path, "", AnalysisConfig(), [kernel]).get(kernel.name)
        for result in run.compile.results:
            for k in result.kernel(kernel.name):
                lines.append(f"- compiled: {resources_summary(k, shape)}")
    if run.test is not None:
        verdict = run.test.summary() if run.test.passed else f"{run.test.status}: {run.test.message}"
        lines.append(f"- test: {verdict}" + (f" on {run.test.device}" if run.test.device else ""))
    if run.timing is not None:
        t = run.timing
        against = "PyTorch" if t.baseline == "eager" else t.baseline_name
        lines.append(f"- timing: {t.speedup:.2f}× vs {against} (median {t.candidate.median:.4g} ms vs "
                     f"{t.baseline_timing.median:.4g} ms)")
    hints = sorted(run.ncu_hints, key=lambda f: f.severity.rank, reverse=True)[:TOP_HINTS]
    lines += [f"- ncu, line {f.span.line}: {f.message}" for f in hints]
    if run.profile is not None and run.profile.error:
        lines.append(f"- ncu: {run.profile.error}")
    if not lines:
        return None
    return "**Last run**" + (f" (version {run.version})" if run.version is not None else "") + "\n\n" + "\n".join(lines)
