"""Everything the Judge may look at for one kernel; any part may be missing (no GPU, not compiled yet...)."""

from __future__ import annotations

from dataclasses import dataclass, field

from cudalens.agents.evaluation import (
    CompiledKernel,
    CompileOutcome,
    CorrectnessOutcome,
    Evaluation,
    ProfileMetrics,
)
from cudalens.agents.gpu_specs import DEFAULT_GPU, GpuSpecs
from cudalens.analysis.api import KernelInfo
from cudalens.analysis.findings import Finding
from cudalens.worker.child.results import CheatFinding, TimingResult


@dataclass(frozen=True)
class JudgeInput:
    kernel: str | None = None
    findings: tuple[Finding, ...] = ()  # static findings of this kernel (CL1xx-CL7xx) and compiler ones
    kernel_info: KernelInfo | None = None
    compile: CompileOutcome | None = None
    built: CompiledKernel | None = None  # ptxas's resources and the occupancy at the launch
    correctness: CorrectnessOutcome | None = None
    timing: TimingResult | None = None
    metrics: ProfileMetrics | None = None
    # the other kernels profiled in the same call (what a fusion would save is in them)
    call: tuple[ProfileMetrics, ...] = ()
    cheats: tuple[CheatFinding, ...] = ()
    gpu: GpuSpecs = field(default=DEFAULT_GPU)


def judge_input(
    evaluation: Evaluation | None,
    kernel: str | None = None,
    findings: tuple[Finding, ...] | list[Finding] = (),
    kernel_info: KernelInfo | None = None,
    cheats: tuple[CheatFinding, ...] | list[CheatFinding] = (),
    gpu: GpuSpecs = DEFAULT_GPU,
) -> JudgeInput:
    """The Judge's view of one kernel of an evaluated candidate (the kernel named, or the first profiled)."""
    if evaluation is None:
        return JudgeInput(kernel, tuple(findings), kernel_info, cheats=tuple(cheats), gpu=gpu)
    profiles = evaluation.profiles
    profile = next((p for p in profiles if kernel and kernel in p.kernel), profiles[0] if profiles else None)
    kernels = evaluation.compile.kernels
    built = next((k for k in kernels if kernel and kernel in k.resources.short_name), kernels[0] if kernels else None)
    return JudgeInput(
        kernel=kernel or (profile.kernel if profile else None),
        findings=tuple(findings),
        kernel_info=kernel_info,
        compile=evaluation.compile,
        built=built,
        correctness=evaluation.correctness,
        timing=evaluation.timing,
        metrics=profile,
        call=tuple(p for p in profiles if p is not profile),
        cheats=tuple(cheats),
        gpu=gpu,
    )
