"""Judge suite: launch-overhead-bound. Adding 1 to 4096 elements, 64 times, one kernel launch each: every launch
does microseconds of work and costs as much again to start."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

STEPS = 64


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + float(STEPS)


N = 4096


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return []


source = """
#include <torch/extension.h>
#define STEPS 64

__global__ void add_one(float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += 1.0f;
}

torch::Tensor add_steps(torch::Tensor x) {
    auto y = x.clone();
    int n = y.numel();
    for (int s = 0; s < STEPS; ++s) add_one<<<(n + 255) / 256, 256>>>(y.data_ptr<float>(), n);
    return y;
}
"""

ext = load_inline(
    name="cudalens_judge_suite_09",
    cpp_sources="torch::Tensor add_steps(torch::Tensor x);",
    cuda_sources=source,
    functions=["add_steps"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.add_steps(x)
