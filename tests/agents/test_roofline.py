"""The roofline from Nsight Compute's counters as ncu reports them (thread instructions, tensor-path operations,
DRAM bytes, duration in ns) and the H200's datasheet peaks."""

from __future__ import annotations

import pytest

from cudalens.agents.evaluation import CorrectnessOutcome, ProfileMetrics
from cudalens.agents.gpu_specs import DEFAULT_GPU, gpu_by_name
from cudalens.agents.judge import JudgeInput, judge
from cudalens.agents.judge.roofline import roofline

N = 1 << 24
# float vector add of 2^24 elements: one FADD per thread, 12 bytes per element, ~50 us on an H200
VECTOR_ADD = {
    "gpu__time_duration.sum": 50_336.0,
    "dram__bytes.sum": 12.0 * N,
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum": float(N),
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 0.0,
    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum": 0.0,
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": 14.2,
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": 88.9,
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": 88.9,
}
# naive FP32 SGEMM 4096³ with shared tiles: 4096³ FFMA, operands re-read from L2, ~12 ms
SGEMM = {
    "gpu__time_duration.sum": 1.21e7,
    "dram__bytes_read.sum": 2.1e8,
    "dram__bytes_write.sum": 6.7e7,
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 4096.0**3,
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum": 0.0,
    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum": 0.0,
    "sm__ops_path_tensor_src_fp16_dst_fp32.sum": 0.0,
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": 71.5,
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": 40.3,
    "sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active": 0.0,
}
# cuBLAS-like HGEMM 8192³ on tensor cores: 2·8192³ tensor-path operations (two per multiply-accumulate), ~1.5 ms
HGEMM = {
    "gpu__time_duration.sum": 1.52e6,
    "dram__bytes.sum": 5.4e8,
    "sm__ops_path_tensor_src_fp16_dst_fp32.sum": 2 * 8192.0**3,
    "sm__ops_path_tensor_src_bf16_dst_fp32.sum": 0.0,
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 1.0e6,
}


def test_a_streaming_kernel_sits_left_of_the_ridge_near_the_bandwidth_roof() -> None:
    r = roofline(ProfileMetrics.of("add", VECTOR_ADD), DEFAULT_GPU)
    assert r is not None
    assert r.point.intensity == pytest.approx(1 / 12)
    assert r.bound == "memory" and r.point.precision == "fp32"
    assert r.point.bytes_per_s == pytest.approx(12.0 * N / 50_336e-9)
    assert r.of_bandwidth == pytest.approx(0.833, abs=0.01)
    assert r.ridge == pytest.approx(67.0e12 / 4.8e12)
    assert "memory-bound" in r.summary() and "FLOP/B" in r.summary()


def test_an_fma_heavy_kernel_is_right_of_the_fp32_ridge_and_below_its_roof() -> None:
    r = roofline(ProfileMetrics.of("sgemm", SGEMM), DEFAULT_GPU)
    assert r is not None and r.bound == "compute"
    assert r.point.flops["fp32"] == 2 * 4096.0**3
    assert r.point.dram_bytes == 2.1e8 + 6.7e7  # read + write when dram__bytes.sum is absent
    assert r.compute.label == "FP32"
    assert r.point.flops_per_s == pytest.approx(11.36e12, rel=0.01)
    assert r.of_roof == pytest.approx(11.36 / 67.0, rel=0.01)


def test_tensor_core_work_meets_the_tensor_roof() -> None:
    r = roofline(ProfileMetrics.of("hgemm", HGEMM), DEFAULT_GPU)
    assert r is not None and r.point.precision == "tensor"
    assert r.compute.label == "tensor FP16/BF16" and r.compute.value == 989.5e12
    assert r.point.flops_per_s == pytest.approx(723e12, rel=0.01)
    assert {c.label for c in r.ceilings} >= {"FP32", "FP16/BF16", "tensor FP16/BF16", "tensor TF32"}


def test_the_peaks_come_from_the_spec_table() -> None:
    a100 = gpu_by_name("A100 80GB")
    r = roofline(ProfileMetrics.of("add", VECTOR_ADD), a100)
    assert r is not None and r.memory.value == 2039e9 and r.compute.value == 19.5e12


def test_no_duration_no_point() -> None:
    assert roofline(ProfileMetrics.of("k", {"dram__bytes.sum": 1e6}), DEFAULT_GPU) is None


def test_the_judge_names_the_bound_from_the_roofline() -> None:
    """Neither unit is busy (SOL < 30 %): right of the ridge the Judge says compute, and its evidence is the point."""
    quiet = {**SGEMM, "sm__throughput.avg.pct_of_peak_sustained_elapsed": 21.0,
             "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": 12.0,
             "sm__warps_active.avg.pct_of_peak_sustained_active": 60.0}
    v = judge(JudgeInput("sgemm", correctness=CorrectnessOutcome("passed", 5, 5),
                         metrics=ProfileMetrics.of("sgemm", quiet)))
    assert v.bottleneck == "compute" and v.method == "use-tensor-cores"
    (ai,) = [e for e in v.evidence if e.metric == "arithmetic_intensity"]
    assert ai.value == pytest.approx(2 * 4096.0**3 / 2.77e8) and "compute-bound" in ai.meaning


def test_the_optimize_prompt_carries_the_verdict_as_cudaforge_judge_json() -> None:
    import json
    import re

    from cudalens.agents.coder.prompts import PromptContext, optimize_messages
    from cudalens.agents.judge.render import render_markdown

    v = judge(JudgeInput("add", correctness=CorrectnessOutcome("passed", 5, 5),
                         metrics=ProfileMetrics.of("add", VECTOR_ADD)))
    assert v.roofline.startswith("roofline: 0.0833 FLOP/B, memory-bound")
    assert "- **Roofline:** 0.0833 FLOP/B" in render_markdown(v)
    (_, user) = optimize_messages(PromptContext("ref", "src", DEFAULT_GPU, v))
    data = json.loads(re.search(r"```json\n(.*?)\n```", user["content"], re.S).group(1))
    assert set(data) == {"bottleneck", "optimisation method", "modification plan", "evidence"}
    assert data["bottleneck"].startswith("memory-bound") and "FLOP/B" in data["bottleneck"]
    assert data["optimisation method"] == v.method_title
    assert data["modification plan"].startswith("1. ")
    assert any("dram__throughput" in e or "gpu__compute_memory_throughput" in e for e in data["evidence"])
