"""Compile resources for a candidate (registers, shared memory, spills, theoretical occupancy and its limiter),
from the profiler's nvcc/ptxas build of the CUDA embedded in the file, added to any evaluator's result.

Compiling needs no GPU and does not run the candidate's code, so it happens here, next to the loop; the
profiler's build cache makes an unchanged kernel free.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from cudalens.agents.evaluation import CandidateEvaluator, CompiledKernel, Evaluation, EvaluationKind
from cudalens.analysis.api import analyze_text
from cudalens.profiler.compile import CompileOptions, compile_python
from cudalens.profiler.compile_findings import launch_shapes, occupancy_for


def compile_resources(
    path: str, source: str, options: CompileOptions | None = None
) -> tuple[tuple[CompiledKernel, ...], str]:
    """ptxas's report per kernel of a Python file embedding CUDA, with occupancy where the launch shape is
    known; and a note when nothing could be compiled (no nvcc, a compile error: the worker reports those)."""
    try:
        built = compile_python(path, source, options or CompileOptions())
    except Exception as exc:  # resources are extra evidence: their absence must not fail the evaluation
        return (), f"resources unavailable: {exc}"
    from cudalens.analysis.config import AnalysisConfig

    try:
        shapes = launch_shapes(path, source, AnalysisConfig(), analyze_text(path, source).kernels)
    except Exception:
        shapes = {}
    out = []
    for k in built.kernels:
        shape = shapes.get(k.short_name)
        out.append(CompiledKernel(k, occupancy_for(k, shape) if shape else None))
    reasons = [p.result.reason for p in built.parts if p.result.status == "skipped" and p.result.reason]
    return tuple(out), ("resources unavailable: " + reasons[0]) if reasons and not out else ""


@dataclass
class WithCompileResources:
    """A `CandidateEvaluator` that adds compile resources to another evaluator's result."""

    inner: CandidateEvaluator
    path: str = "candidate.py"
    options: CompileOptions | None = None

    def cancel(self) -> None:
        killer = getattr(self.inner, "cancel", None)
        if killer is not None:
            killer()

    def evaluate(self, source: str, kind: EvaluationKind = "full") -> Evaluation:
        evaluation = self.inner.evaluate(source, kind)
        if not evaluation.compile.ok:
            return evaluation
        kernels, note = compile_resources(self.path, source, self.options)
        notes = (*evaluation.notes, note) if note else evaluation.notes
        return replace(evaluation, compile=replace(evaluation.compile, kernels=kernels), notes=notes)
