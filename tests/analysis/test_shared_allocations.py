"""Which `__shared__` allocation an access touches: a helper's own array is one per function and template
instantiation (whatever its name), every `extern __shared__` name aliases the one dynamic buffer. Checked per
kernel on the shapes of llm.c's blockReduce and cuda-samples' SharedMemory helpers."""

from __future__ import annotations

from pathlib import Path

from cudalens.analysis.api import analyze_text
from cudalens.analysis.config import AnalysisConfig

FIXTURE = Path(__file__).parent / "fixtures" / "CL3_shared.cu"


def _races_by_kernel(path: str, text: str) -> dict[str, int]:
    report = analyze_text(path, text, AnalysisConfig(min_severity="hint"))
    out: dict[str, int] = {}
    for f in report.findings:
        if f.code == "CL303":
            out[f.kernel] = out.get(f.kernel, 0) + 1
    return out


def test_two_instantiations_of_a_helper_use_two_arrays() -> None:
    races = _races_by_kernel(str(FIXTURE), FIXTURE.read_text())
    assert "max_then_sum_ok" not in races and "sum_twice_synced_ok" not in races
    assert races.get("sum_twice_unsynced") == 1


def test_same_name_in_two_helpers_is_two_arrays() -> None:
    text = """
__device__ float stage_a(float v) { __shared__ float buf[256]; buf[threadIdx.x] = v; __syncthreads();
    return buf[255 - threadIdx.x]; }
__device__ float stage_b(float v) { __shared__ float buf[256]; buf[threadIdx.x] = v; __syncthreads();
    return buf[255 - threadIdx.x]; }
__global__ void k(float* out) { out[threadIdx.x] = stage_b(stage_a(out[threadIdx.x])); }
void h(float* a) { k<<<1, 256>>>(a); }
"""
    assert _races_by_kernel("k.cu", text) == {}


def test_extern_shared_names_alias_one_buffer() -> None:
    text = """
__global__ void k(const float* in, float* out) {
    extern __shared__ float a[];
    a[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = a[255 - threadIdx.x];
    extern __shared__ float b[];
    b[threadIdx.x] = 0.0f;
}
void h(float* x) { k<<<1, 256, 1024>>>(x, x); }
"""
    assert _races_by_kernel("k.cu", text) == {"k": 1}  # b[] overwrites what other threads still read of a[]
