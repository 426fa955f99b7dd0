"""Judge suite: atomics on one address. Counting positive elements with one atomicAdd per element, every thread
of the grid on the same counter: the L2 serialises 16 million atomics."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x > 0).sum()


N = 1 << 24


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return []


source = """
#include <torch/extension.h>

__global__ void count_positive(const float* x, unsigned long long* total, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > 0.0f) atomicAdd(total, 1ULL);
}

torch::Tensor count(torch::Tensor x) {
    auto total = torch::zeros({}, x.options().dtype(torch::kInt64));
    int n = x.numel();
    count_positive<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(),
        reinterpret_cast<unsigned long long*>(total.data_ptr<int64_t>()), n);
    return total;
}
"""

ext = load_inline(
    name="cudalens_judge_suite_08",
    cpp_sources="torch::Tensor count(torch::Tensor x);",
    cuda_sources=source,
    functions=["count"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.count(x)
