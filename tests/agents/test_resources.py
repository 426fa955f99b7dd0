"""Compile resources (real nvcc/ptxas through the profiler) attached to evaluations."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cudalens.agents.judge import judge, judge_input
from cudalens.agents.profiler_evaluator import ProfilerEvaluator, ProfilerEvaluatorSettings
from cudalens.agents.resources import WithCompileResources, compile_resources
from tests.agents.kernelbench_cpu import FAST, REFERENCE

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")

HEAVY = '''
cuda_src = """
__global__ void heavy(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc[40];
    #pragma unroll
    for (int k = 0; k < 40; ++k) acc[k] = x[(i + k * 977) % n] * (k + 1);
    float s = 0.f;
    #pragma unroll
    for (int k = 0; k < 40; ++k) for (int j = 0; j < 40; ++j) s += acc[k] * acc[j] / (1.f + acc[(k + j) % 40]);
    if (i < n) y[i] = s;
}
void launch(const float* x, float* y, int n) { heavy<<<(n + 1023) / 1024, 1024>>>(x, y, n); }
"""
'''


@needs_nvcc
def test_registers_and_occupancy_of_an_embedded_kernel() -> None:
    (built,), note = compile_resources("heavy.py", "import torch\n" + HEAVY)
    k, occupancy = built.resources, built.occupancy
    assert note == "" and k.short_name == "heavy" and k.registers > 32
    assert occupancy is not None and occupancy.block_size == 1024 and occupancy.fraction <= 0.5
    assert occupancy.limiter == "registers"


@needs_nvcc
def test_resources_join_the_evaluation_and_the_judge_reads_them(tmp_path: Path) -> None:
    inner = ProfilerEvaluator(REFERENCE, ProfilerEvaluatorSettings(device="cpu", timeout_s=120, budget_ms=50))
    try:
        evaluation = WithCompileResources(inner, "heavy.py").evaluate(FAST + HEAVY)
    finally:
        inner.close()
    assert evaluation.correct and evaluation.compile.kernels[0].resources.short_name == "heavy"
    verdict = judge(judge_input(evaluation, "heavy"))
    assert (
        verdict.predicted
        and verdict.bottleneck == "occupancy"
        and verdict.method == "reduce-register-pressure"
    )


def test_no_cuda_no_resources() -> None:
    assert compile_resources("plain.py", FAST) == ((), "")
