"""What findings say, on the shapes of llm.c and cuda-samples where they said wrong things: a race names its
writer as the writer, a stride that rests on sampled sizes is written in the program's names (never as the
sampled number), a regular pattern of lanes is described, not called irregular."""

from __future__ import annotations

import pytest

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


@pytest.mark.parametrize(("index", "params", "stride"), [
    ("row * C", "int C", "`C` elements apart"),
    ("row * (T + 1)", "int T", "`T + 1` elements apart"),
    ("row * NH * T", "int NH, int T", "`NH × T` elements apart"),
    ("row * d1 * d2 * d3 + d1", "int d1, int d2, int d3", "`d1 × d2 × d3` elements apart"),
    ("row * d1 * d2 + row * d3", "int d1, int d2, int d3", "a run-time stride apart (it depends on `d1`, `d2`, `d3`)"),
])
def test_a_sampled_stride_is_written_in_the_program_s_names(index: str, params: str, stride: str) -> None:
    source = f"""
__global__ void k(const float* in, float* out, {params}) {{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    out[row] = in[{index}];
}}
void h(float* a, int n) {{ k<<<64, 256>>>(a, a, {", ".join("n" for _ in params.split(","))}); }}
"""
    [message] = _messages(source, "CL101")
    assert f"consecutive lanes are {stride}," in message
    assert "4096" not in message and "4352" not in message


def test_a_stride_the_launch_fixes_is_a_number_and_one_no_parameter_sets_is_too() -> None:
    # the lb solutions' `A[row * K + i]` in a 16×16 block: within a group of 16 lanes the step is K; with the
    # sizes given at the launch it is their value, and a step no parameter changes (a pixel's 4 channels) is 4
    source = """
__global__ void k(const float* in, float* out, int d1, int d2, int d3, int width) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    out[row] = in[row * d1 * d2 + row * d3];
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    for (int c = 0; c < 4; ++c) out[(y * width + x) * 4 + c] = 1.0f;
}
__global__ void m(const float* A, float* C, int K) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    C[row] = A[row * K];
}
void h(float* a, int w, int K) {
    k<<<64, 256>>>(a, a, 4, 4, 4, w);
    m<<<dim3(8, 8), dim3(16, 16)>>>(a, a, K);
}
"""
    messages = _messages(source, "CL101")
    assert any("consecutive lanes are 20 elements (80 B) apart," in m for m in messages), messages
    assert any("consecutive lanes are 4 elements (16 B) apart," in m for m in messages), messages
    assert any("consecutive lanes are `K` elements apart within each group of 16 lanes" in m for m in messages)
    assert not any("4096" in m or "4352" in m for m in messages), messages


@pytest.mark.parametrize(("name", "value", "sectors"), [
    ("C", "n", "touches up to 32 sectors where 4 would do"),  # a row length: never 1, so never coalesced
    ("o_stride_d", "n", "touches up to 32 sectors where 4 would do unless `o_stride_d` is 1, which the code allows"),
    ("C", "64", "touches 32 sectors where 4 would do"),  # the launch fixes the stride: the count is the program's
])
def test_the_sectors_of_a_run_time_stride_are_what_holds_for_every_value(name: str, value: str, sectors: str) -> None:
    # apex's fused RoPE stored `dst[... + d * o_stride_d]` and read "touches 32 sectors" as fact: the count
    # was the sampled stride's, and a contiguous tensor (`o_stride_d` = 1) coalesces
    source = f"""
__global__ void k(const float* in, float* out, int {name}) {{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    out[row] = in[row * {name}];
}}
void h(float* a, int n) {{ k<<<64, 256>>>(a, a, {value}); }}
"""
    [message] = _messages(source, "CL101")
    assert message.endswith(f"so a warp request {sectors}") or f"so a warp request {sectors} (" in message, message

def test_a_stride_the_runs_cannot_name_coalesces_when_it_is_1() -> None:
    # apex's thd RoPE: the offset follows loaded sequence starts, so the runs cannot tell `stride_d` from
    # `stride_h`; either may be 1, and then the lanes are neighbours
    source = """
__global__ void k(const float* in, float* out, const int* starts, int stride_h, int stride_d) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    out[row] = in[starts[blockIdx.y] * stride_h + row * stride_d];
}
void h(float* a, const int* s, int n, int m) { k<<<dim3(64, 4), 256>>>(a, a, s, n, m); }
"""
    [message] = _messages(source, "CL101")
    assert "`stride_d` or `stride_h` elements apart, so a warp request touches up to 32 sectors where 4 would do " \
        "unless the stride is 1, which the code allows" in message, message

def test_a_stride_of_an_unread_element_type_names_no_value_that_coalesces() -> None:
    # 3DGS's backward reads `shs[idx * max_coeffs]` of `glm::vec3`: with the type not read, a stride of 1 is
    # one vec3 (12 B), not a neighbouring float, so "unless it is 1" would be false
    source = """
__global__ void k(const glm::vec3* sh, float* out, int sh_stride) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    glm::vec3 c = sh[idx * sh_stride];
    out[idx] = c.x;
}
void h(const glm::vec3* s, float* a, int n) { k<<<64, 256>>>(s, a, n); }
"""
    [message] = _messages(source, "CL101")
    assert "touches up to 32 sectors where 4 would do (counted with 4-byte elements" in message, message
    assert "unless" not in message, message

def test_rows_of_a_2d_block_are_groups_not_irregular_offsets() -> None:
    # cuda-samples' simpleD3D11Texture: a float4 pixel per thread, rows a pitch apart
    source = """
__global__ void k(unsigned char* surface, size_t pitch) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    float* pixel = (float*)(surface + y * pitch) + 4 * x;
    pixel[0] = 1.0f;
}
void h(unsigned char* s) { k<<<dim3(8, 8), dim3(16, 16)>>>(s, 4096); }
"""
    [message] = _messages(source, "CL101")
    assert "4 elements apart within each group of 16 lanes" in message


def test_a_conflict_on_a_line_that_later_indexes_by_data_is_not_proven() -> None:
    # mergeSort's probes: each thread searches its own segment; the first probe is known, the later ones
    # follow the keys
    source = """
__global__ void k(const unsigned* in, unsigned* out) {
    __shared__ unsigned s_key[4096];
    s_key[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    const unsigned* data = s_key + threadIdx.x * 16;
    unsigned pos = 0;
    for (unsigned stride = 8; stride > 0; stride >>= 1) {
        if (data[pos + stride - 1] < 7u) pos += stride;
    }
    out[threadIdx.x] = pos;
}
void h(unsigned* a) { k<<<1, 256>>>(a, a); }
"""
    report = analyze_text("k.cu", source, AnalysisConfig(min_severity="hint"))
    [finding] = [f for f in report.findings if f.code == "CL301"]
    assert finding.severity.value == "info" and "the index follows loaded data" in finding.message
