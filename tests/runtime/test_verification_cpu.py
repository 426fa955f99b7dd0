"""The verification's checks that need no GPU (issue 32): the physical bound's arithmetic and peaks, and the
attribution of a call's device time from kernel lists as torch.profiler recorded them on the H200."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from cudalens.worker.child.lib import attribution, physical_bound
from cudalens.worker.child.results import Attribution, PhysicalBound

torch = pytest.importorskip("torch")

MB = 1024 * 1024
H200 = SimpleNamespace(name="NVIDIA H200", major=9, minor=0, multi_processor_count=132, clock_rate=1_980_000,
                       memory_clock_rate=2_619_000, memory_bus_width=6144, L2_cache_size=50 * MB)


def test_least_bytes_reads_each_input_once_and_writes_outputs_beyond_the_l2():
    x, w = torch.empty(1024, 1024), torch.empty(256)  # 4 MiB and 1 KiB
    out = torch.empty(1024, 1024)
    assert physical_bound.least_bytes([x, w], [out], l2_bytes=0) == 4 * MB + 1024 + 4 * MB
    assert physical_bound.least_bytes([x, w], [out], l2_bytes=50 * MB) == 4 * MB + 1024  # the L2 may keep the writes
    # the same storage twice counts once; an output written into an input's storage is not written again
    assert physical_bound.least_bytes([x, x, x[0]], [x.view(-1)], l2_bytes=0) == 4 * MB


def test_the_6_4_gb_swish_that_ran_in_microseconds_is_far_below_its_bound():
    # issue 32, class 3: 4096 × 393216 fp32 in, the same out, on the H200
    gbs, tflops, source = physical_bound.peaks(H200)
    assert gbs == 4800 and "datasheet" in source  # the datasheet's 4.8 TB/s, more than its clocks say (4.02)
    elements = 4096 * 393216
    bound = PhysicalBound(4 * elements + 4 * elements - 50 * MB, 0.0, gbs, tflops)
    assert 2.6 < bound.ms < 2.7  # 12.8 GB at 4.8 TB/s
    assert "GB through DRAM" in bound.describe() and bound.ms > 0.004  # the cheat's "microseconds"


def test_peaks_are_the_larger_of_the_datasheet_and_the_device_report():
    newer = SimpleNamespace(name="NVIDIA B300", major=10, minor=0, multi_processor_count=148, clock_rate=2_000_000,
                            memory_clock_rate=4_000_000, memory_bus_width=8192)
    gbs, tflops, source = physical_bound.peaks(newer)
    assert gbs == pytest.approx(8192.0)  # from its clocks: no table entry
    assert tflops == pytest.approx(148 * 2e9 * physical_bound.NEWER_FLOP_PER_CLOCK * 2 / 1e12)
    assert "as the device reports it" in source
    _, h200_tflops, _ = physical_bound.peaks(H200)
    assert h200_tflops >= 2 * 989.5  # never below the 8-bit rate: the bound refuses no honest kernel


def test_least_flops_counts_a_matmul_and_nothing_for_element_wise_work():
    a, b = torch.randn(64, 32), torch.randn(32, 16)
    assert physical_bound.least_flops(lambda x, y: x @ y, [a, b]) == 2 * 64 * 32 * 16
    assert physical_bound.least_flops(lambda x: x * torch.sigmoid(x), [a]) == 0
    bound = PhysicalBound(0, 2 * 4096**3, 4800, 1979)
    assert bound.ms == pytest.approx(2 * 4096**3 / 1979e12 * 1e3) and "GFLOP" in bound.describe()
    assert PhysicalBound.from_json(json.loads(json.dumps(bound.to_json()))) == bound


# torch.profiler's names of one call's launches on the H200 (device ms)
SWISH = "swish_kernel(float const*, float*, long)"
FILL = ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >"
        "(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)")
SIGMOID = ("void at::native::vectorized_elementwise_kernel<4, at::native::sigmoid_kernel_cuda(at::TensorIteratorBase&)"
           "::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul> >"
           "(int, at::native::sigmoid_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}"
           "::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>)")
GEMM = "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32_warpgroupsize1x1_execute_segment_k_off_kernel__5x_cublas"
SOURCE = "__global__ void swish_kernel(const float* x, float* y, long n) { }"


def test_an_honest_kernel_with_its_fill_and_memset_carries_the_work():
    calls = ((SWISH, 2.71), (FILL, 0.9), ("Memset (Device)", 0.002))
    found = attribution.attribute(calls, ["swish_kernel"], SOURCE)
    assert found.own_ms == 2.71 and found.own_share > 0.7
    assert attribution.finding(found) is None


def test_aten_doing_the_work_beside_a_kernel_that_does_little_is_cl907_with_names_and_shares():
    # issue 32, class 2: the extension's C++ calls at::sigmoid; the file's kernel multiplies (or does nothing)
    calls = ((SIGMOID, 2.70), (SWISH, 0.05))
    found = attribution.finding(attribution.attribute(calls, ["swish_kernel"], SOURCE))
    assert found is not None and found.code == "CL907" and found.check == "library-kernels"
    assert found.message.startswith("the file's own kernels carry 2% of the call's device time")
    assert "sigmoid_kernel_cuda" in found.message and "98%" in found.message
    cublas = attribution.finding(attribution.attribute(((GEMM, 1.2),), ["matmul_kernel"], SOURCE))
    assert cublas is not None and "sm90_xmma_gemm" in cublas.message


def test_a_file_cannot_claim_a_library_kernel_by_naming_its_own_the_same():
    calls = ((SIGMOID, 2.70), ("vectorized_elementwise_kernel(float*)", 0.01))
    found = attribution.attribute(calls, ["vectorized_elementwise_kernel"], "__global__ void vectorized_elementwise_kernel(float* p) {}")
    assert found.own_ms == 0.01
    # its own namespaces and anonymous ones are its own
    mine = "namespace fast { __global__ void k(float* p) {} }"
    assert attribution.is_own("void fast::k<256>(float*)", {"k"}, {"fast"})
    assert attribution.is_own("void (anonymous namespace)::k(float*)", {"k"}, set())
    assert attribution.attribute((("void fast::k<256>(float*)", 1.0),), ["k"], mine).own_share == 1.0


def test_attribution_crosses_the_process_boundary_as_json():
    a = Attribution(1.5, ((FILL, 0.5),))
    back = Attribution.from_json(json.loads(json.dumps(a.to_json())))
    assert back == a and back.own_share == 0.75


# the plausibility re-verification (profiler/reverify.py)
from cudalens.profiler import reverify  # noqa: E402
from cudalens.worker.child.protocol import JobResult  # noqa: E402
from cudalens.worker.child.results import CheatFinding, Measurement, TestResult, TimingResult  # noqa: E402


def _job(test: TestResult, speedup: float | None) -> JobResult:
    timing = None if speedup is None else TimingResult(
        Measurement.from_samples("candidate", [1.0] * 10), Measurement.from_samples("reference", [speedup] * 10))
    return JobResult("j", "test", "ok", {"test": test.to_json(), "timing": timing and timing.to_json()})


def test_only_a_speedup_above_ten_times_is_run_again_with_new_seeds_and_the_reference_first():
    passed = TestResult("passed")
    assert reverify.reverification(_job(passed, 9.5), {"path": "k.py", "time": True}) is None
    again = reverify.reverification(_job(passed, 2025.0), {"path": "k.py", "time": True, "seed": 42})
    assert again == {"path": "k.py", "time": True, "seed": 42 ^ reverify.RESEED, "reference_first": True}


def test_a_rerun_that_fails_fails_the_result_with_its_own_findings():
    first = _job(TestResult("passed"), 2025.0)
    cheat = CheatFinding("timed-output-wrong", "timed call 7 returned a wrong result", 0, "reject", "CL901")
    merged = reverify.reverified(first, _job(TestResult("failed", message="timed call 7 …", cheats=(cheat,)), None))
    test = TestResult.from_json(merged.payload["test"])
    assert test.status == "failed" and merged.payload["timing"] is None
    assert test.message.startswith("2.02e+03× over eager PyTorch (above 10×) did not hold up in a fresh process")
    assert [c.code for c in test.cheats] == ["CL901"]
    crashed = reverify.reverified(first, JobResult("j", "test", "crash", {}, "the worker was killed by SIGSEGV"))
    assert [c.check for c in TestResult.from_json(crashed.payload["test"]).cheats] == ["not-reproduced"]


def test_a_rerun_that_agrees_keeps_the_lower_speedup_and_says_both():
    merged = reverify.reverified(_job(TestResult("passed"), 40.0), _job(TestResult("passed"), 31.0))
    timing = TimingResult.from_json(merged.payload["timing"])
    assert timing.speedup == pytest.approx(31.0)
    assert any("re-verified in a fresh process" in w and "31×" in w for w in timing.candidate.warnings)


VECTORISED = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        total = x[0]
        for i in range(1, x.shape[0]):  # one small op at a time
            total = total + x[i]
        return total


class ModelNew(nn.Module):
    def forward(self, x):
        return x.sum(0)


def get_inputs():
    return [torch.randn(256, 64)]


def get_init_inputs():
    return []
'''


def test_a_plausible_big_speedup_is_re_verified_in_a_fresh_worker_and_counts(tmp_path):
    from cudalens.worker.run_job import run_job

    path = tmp_path / "vectorised.py"
    path.write_text(VECTORISED)
    payload = {"path": str(path), "device": "cpu", "time": True, "budget_ms": 20}
    first = run_job("test", payload, timeout_s=300, cwd=str(tmp_path))
    assert first.ok and first.payload["test"]["status"] == "passed", first.error
    assert TimingResult.from_json(first.payload["timing"]).speedup > reverify.PLAUSIBLE_SPEEDUP
    result = reverify.verified(first, payload, timeout_s=300, cwd=str(tmp_path))
    timing = TimingResult.from_json(result.payload["timing"])
    assert result.payload["test"]["status"] == "passed"
    assert any("re-verified in a fresh process" in w for w in timing.candidate.warnings)


def test_a_checked_call_is_judged_on_its_outputs_as_they_were_when_the_timer_stopped():
    from cudalens.worker.child.lib import harness_timing

    out = (torch.zeros(4), [torch.ones(2)], {"k": torch.full((3,), 7.0)}, 5)
    copy = harness_timing.snapshot(out)
    out[0].fill_(1.0)  # what a thread or another stream finishes after the call returned
    out[1][0].zero_()
    out[2]["k"].zero_()
    assert copy[0].sum() == 0 and copy[1][0].sum() == 2 and copy[2]["k"].sum() == 21 and copy[3] == 5


SLOWED_REFERENCE = VECTORISED.replace("import torch.nn as nn\n", """import torch.nn as nn

_add = torch.Tensor.__add__


def _slow_add(a, b):  # the reference's own op, made slower
    for _ in range(20):
        _add(a, b)
    return _add(a, b)


torch.Tensor.__add__ = _slow_add
""", 1)


def test_a_file_that_replaces_a_torch_function_the_reference_calls_fails_and_retires_its_worker(tmp_path):
    """Issue 32 corpus: pygpubench's `submission_replace_torch` slows the reference by replacing the torch function
    it calls; the honest kernel then looks many times faster. Whatever spelling: the worker compares torch's
    callables with the ones it kept before any candidate ran."""
    from cudalens.worker.run_job import run_job

    path = tmp_path / "slowed.py"
    path.write_text(SLOWED_REFERENCE)
    result = run_job("test", {"path": str(path), "device": "cpu", "time": True, "budget_ms": 5}, timeout_s=300,
                     cwd=str(tmp_path))
    test = result.payload["test"]
    assert result.ok and test["status"] == "failed" and result.context_broken, (result.error, test)
    assert [(c["check"], c["code"]) for c in test["cheats"]] == [("torch-replaced", "CL906")]
    assert test["message"].startswith("the file replaces torch.Tensor.__add__ at line ")
