"""The thread-index dataflow of the kernel model: which values depend on which thread/block indices,
parameters, loop variables and loaded data; lane and warp ids; warp shapes of 2-D blocks."""

from __future__ import annotations

import numpy as np

from cudalens.analysis.api import analyze_text
from cudalens.analysis.config import AnalysisConfig
from cudalens.analysis.model import build_models
from cudalens.analysis.positions import LineIndex
from cudalens.analysis.unit import build_unit
from cudalens.analysis.values import data_dependent

SOURCE = """
#define WARP 32
__global__ void k(const float* in, float* out, const int* idx, int n) {
    int lane = threadIdx.x & 31;
    int lane2 = threadIdx.x % WARP;
    int warp = threadIdx.x >> 5;
    int warp2 = threadIdx.x / 32;
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    int j = idx[gid];
    for (int it = 0; it < n; ++it) {
        out[gid + it * n] = in[j];
    }
    out[warp * 32 + lane] = out[warp2 * 32 + lane2];
}
__global__ void k2(float* out) { out[threadIdx.y * 8 + threadIdx.x] = 0; }
void host(float* a) {
    k<<<4, 128>>>(a, a, 0, 4);
    k2<<<1, dim3(8, 4)>>>(a);
}
"""


def _model(name: str):
    unit = build_unit(SOURCE.encode())
    return next(m for m in build_models("k.cu", unit, LineIndex(SOURCE), None) if m.name == name)


def test_lane_and_warp_ids_and_dependencies() -> None:
    model = _model("k")
    assert model.block == (128, 1, 1) and model.block_source == "launch"
    accesses = model.primary.accesses
    gather = next(a for a in accesses if a.base == "in")
    assert gather.addr is None and "data" in gather.deps  # index loaded from idx[]
    strided = next(a for a in accesses if a.base == "out" and a.write and "loop:it" in a.deps)
    assert {"tid.x", "bid", "param:n"} <= strided.deps
    # out[warp * 32 + lane] and out[warp2 * 32 + lane2] are the thread's own index: 0..127
    last_write = [a for a in accesses if a.base == "out" and a.write][-1]
    assert np.array_equal(last_write.addr // 4, np.arange(128))
    last_read = [a for a in accesses if a.base == "out" and not a.write][-1]
    assert np.array_equal(last_read.addr, last_write.addr)


def test_small_blocks_put_threadidx_y_inside_a_warp() -> None:
    model = _model("k2")
    assert model.block == (8, 4, 1)
    [store] = model.primary.accesses
    # one warp = 8 lanes along x times 4 along y, all 32 elements distinct and contiguous
    assert np.array_equal(np.sort(store.addr[:32] // 4), np.arange(32))
    assert {"tid.x", "tid.y"} <= store.deps


STAND_IN_SOURCE = """
__global__ void k(float* out, const int* inp, const float* wte, const int* strides, int C) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    int ix = inp[idx / C];
    int s = strides[idx / C];
    out[idx] = wte[ix * C + idx % C];
    if (ix > 0) out[idx + 1] = 0.0f;
    out[idx + 2] = wte[threadIdx.x * s];
}
"""


def test_a_value_each_warp_loads_from_one_address_gives_addresses_but_no_proof() -> None:
    """llm.c's encoder kernels: `inp[b * T + t]` is one element per warp, so the row it picks is read along
    `c` by consecutive lanes whatever its value (no CL104); a branch on it is one on data, and a stride taken
    from it is sampled, never proven."""
    unit = build_unit(STAND_IN_SOURCE.encode())
    [model] = build_models("k.cu", unit, LineIndex(STAND_IN_SOURCE), None)
    row, strided = [a for a in model.primary.accesses if a.base == "wte"]
    assert row.addr is not None and row.sampled and strided.sampled
    [branch] = [b for b in model.primary.branches if b.kind == "if"]
    assert branch.cond is None and data_dependent(branch.deps)
    report = analyze_text("k.cu", STAND_IN_SOURCE, AnalysisConfig(min_severity="hint"))
    by_line = {(f.line, f.code): f for f in report.findings}
    assert (6, "CL104") not in by_line and (6, "CL101") not in by_line
    assert by_line[(8, "CL101")].severity.value == "info"
