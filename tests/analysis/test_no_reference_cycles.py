"""An edit's analysis is freed when the next one replaces it, without waiting for the cyclic collector: a unit,
its kernels' models and its headers left in reference cycles stayed until a full collection, which a large
server heap makes rare (a 20,000-line file's session grew 245 → 336 MB over 2,000 edits, issue 34;
benchmarks/server_big_file_session.py measures the memory itself)."""

from __future__ import annotations

import gc

from cudalens.analysis.api import DocumentAnalyzer

HEADER = "#define TILE 16\nstruct Pair { float v[TILE]; };\n__device__ float twice(float x) { return 2 * x; }\n"
TEXT = """#include "tile.cuh"
const int N = TILE * 4;
__global__ void k(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i * N] = twice(in[i]);
}
void go(const float* in, float* out, int n) { k<<<(n + 255) / 256, 256>>>(in, out, n); }
"""


def test_an_edit_leaves_no_garbage_cycles_behind() -> None:
    doc = DocumentAnalyzer("/src/k.cu", read_include=lambda name, including: HEADER if name == "tile.cuh" else None)
    report = doc.update(TEXT)
    assert report.headers and report.kernels and report.findings  # the header, the model and the rules all ran
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)  # what the collector finds stays in gc.garbage, to be looked at
    try:
        for k in range(5):  # each edit re-analyses the kernel: a new unit, model and header walk
            doc.update(TEXT.replace("out[i * N]", f"out[i * N + {k}]"))
        gc.collect()
        # ours only: another test's threads in this worker (a server's event loop) may leave cycles meanwhile
        ours = [type(o).__qualname__ for o in gc.garbage if type(o).__module__.startswith(("cudalens", "tree_sitter"))]
        assert ours == []
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
