"""What findings say, on the shapes of llm.c and cuda-samples where they said wrong things: a race names its
writer as the writer, a stride that rests on sampled sizes is written in the program's names (never as the
sampled number), a regular pattern of lanes is described, not called irregular."""

from __future__ import annotations

from cudalens.analysis.api import analyze_text
from cudalens.analysis.config import AnalysisConfig


def _messages(source: str, code: str) -> list[str]:
    report = analyze_text("k.cu", source, AnalysisConfig(min_severity="hint"))
    return [f.message for f in report.findings if f.code == code]


def test_a_race_names_the_writer_and_a_reader_of_another_warp() -> None:
    # llm.c softmax_forward_kernel4: every thread reads storage[0], then lane 0 of warp 0 writes it, no barrier
    source = """
__global__ void k(float* out) {
    __shared__ float storage[32];
    int tid = threadIdx.x;
    if (tid % 32 == 0) storage[tid / 32] = 1.0f;
    __syncthreads();
    float offset = storage[0];
    if (tid % 32 == 0) storage[tid / 32] = offset;
    out[tid] = offset;
}
void h(float* a) { k<<<1, 256>>>(a); }
"""
    [message] = _messages(source, "CL303")
    assert "thread 0 writes the element that thread 32 read" in message
