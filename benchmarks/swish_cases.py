"""KernelBench level-1 problem 25 (Swish) with inline-CUDA candidates that probe the evaluation (issue 13):
an honest kernel, one that writes into its input and returns it, one that launches its kernel and returns
torch's result, one that replaces a clock at import, one that never finishes.

`swish_file(rows, cols, variant)` is the whole KernelBench file; the GPU tests (tests/runtime/
test_verdicts_gpu.py) write small ones, benchmarks/timing_overhead.py the full 4096×393216 one.
"""

from __future__ import annotations

VARIANTS = ("honest", "in-place", "torch-result", "fake-clock", "hang")

_CUDA = r'''
#include <torch/extension.h>

__global__ void swish_kernel(const float* __restrict__ x, float* __restrict__ y, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    long stride = (long)gridDim.x * blockDim.x;
    for (; i < n; i += stride) {
        float v = x[i];
        y[i] = v / (1.0f + __expf(-v));
    }
}

__global__ void swish_hang(const float* x, float* y, long n) {
    volatile const float* p = x;
    while (p[0] == p[0]) {}   // never false for the inputs get_inputs() makes (no NaN)
    y[0] = p[0];
}

static int blocks_for(long n) {
    long wanted = (n + 255) / 256;
    return (int)(wanted < 65535L * 16 ? wanted : 65535L * 16);
}

void swish_out(torch::Tensor x, torch::Tensor y) {
    long n = x.numel();
    swish_kernel<<<blocks_for(n), 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
}

torch::Tensor swish(torch::Tensor x) {
    auto y = torch::empty_like(x);
    swish_out(x, y);
    return y;
}

torch::Tensor swish_in_place(torch::Tensor x) {
    swish_out(x, x);
    return x;
}

torch::Tensor swish_never_ends(torch::Tensor x) {
    auto y = torch::empty_like(x);
    swish_hang<<<1, 1>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
'''

_FORWARD = {
    "honest": "return ext.swish(x)",
    "in-place": "return ext.swish_in_place(x)",
    "torch-result": "ext.swish(x)\n        return x * torch.sigmoid(x)",
    "fake-clock": "return ext.swish(x)",
    "hang": "return ext.swish_never_ends(x)",
}


def swish_file(rows: int, cols: int, variant: str = "honest") -> str:
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r} (one of {', '.join(VARIANTS)})")
    fake = "\ntorch.cuda.Event.elapsed_time = lambda self, end: 0.001  # the fake clock\n" if variant == "fake-clock" else ""
    return f'''"""25_Swish, {variant} candidate (benchmarks/swish_cases.py)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(x)


batch_size = {rows}
dim = {cols}


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return []


cuda_source = r"""{_CUDA}"""

ext = load_inline(
    name="cudalens_swish_cases",
    cpp_sources="""torch::Tensor swish(torch::Tensor x);
void swish_out(torch::Tensor x, torch::Tensor y);
torch::Tensor swish_in_place(torch::Tensor x);
torch::Tensor swish_never_ends(torch::Tensor x);""",
    cuda_sources=cuda_source,
    functions=["swish", "swish_out", "swish_in_place", "swish_never_ends"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)
{fake}

class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        {_FORWARD[variant]}
'''
