"""The Judge in the editor: after a run, one verdict per kernel (failing, or measured from the timing and the ncu
profile) as a CL910 diagnostic and in the kernel's hover; before any run, a predicted verdict in the hover."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace

from cudalens.agents.gpu_specs import GpuSpecs, peaks_of
from cudalens.agents.judge import judge, judge_input
from cudalens.agents.judge.render import render_markdown, verdict_findings
from cudalens.agents.profiler_evaluator import evaluation_from_job, profile_metrics
from cudalens.analysis.api import KernelInfo
from cudalens.analysis.findings import Finding
from cudalens.profiler.gpu_specs import GpuFacts, NoGpu
from cudalens.server.pipeline_on_save import LastRun, SaveJob

logger = logging.getLogger("cudalens.server")


def specs(gpu: GpuFacts | NoGpu) -> GpuSpecs:
    return peaks_of(gpu)[0]


def add_verdicts(job: SaveJob, run: LastRun, gpu: GpuSpecs, timeout_s: float) -> None:
    """CL910 on each kernel of a run that tested or profiled something, and its hover text."""
    if not job.kernels or (run.outcome is None and run.profile is None):
        return
    evaluation = None
    if run.outcome is not None:
        o = run.outcome
        evaluation = evaluation_from_job(job.text, o.status, o.payload, o.error, timeout_s)
    profiles = profile_metrics(run.profile) if run.profile is not None and not run.profile.error else ()
    if evaluation is not None:
        evaluation = replace(evaluation, profiles=profiles)
    for kernel in job.kernels:
        own = tuple(f for f in run.findings if f.kernel == kernel.name)
        inp = judge_input(evaluation, kernel.name, own, kernel, gpu=gpu)
        if evaluation is None:  # profiled without a test run: the measured verdict still reads the profile
            inp = replace(inp, metrics=next((p for p in profiles if p.kernel == kernel.name), None))
        verdict = judge(inp)
        run.verdicts[kernel.name] = render_markdown(verdict)
        run.findings += verdict_findings(verdict, job.path, kernel.name_span)


def hover(run: LastRun | None, kernel: KernelInfo, findings: Sequence[Finding]) -> str | None:
    """The last run's verdict on `kernel`, else a predicted one from its structure and static findings."""
    if run is not None and kernel.name in run.verdicts:
        return run.verdicts[kernel.name]
    try:
        own = tuple(f for f in findings if f.kernel == kernel.name)
        return render_markdown(judge(judge_input(None, kernel.name, own, kernel)))
    except Exception:  # a verdict is a bonus: never lose the hover over it
        logger.exception("the predicted verdict for %s failed", kernel.name)
        return None
