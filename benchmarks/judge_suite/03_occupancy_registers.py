"""Judge suite: occupancy limited by registers. Horner's rule with 160 coefficients held in registers: ~170
registers a thread leave room for one 256-thread block per SM, and the dependent FMA chain has too few warps to
hide its latency."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

TERMS = 160


class Model(nn.Module):
    def forward(self, x: torch.Tensor, coef: torch.Tensor) -> torch.Tensor:
        y = torch.zeros_like(x)
        for k in range(coef.numel()):
            y = y * x + coef[k]
        return y


N = 1 << 24


def get_inputs():
    return [torch.rand(N) * 0.9, torch.rand(TERMS) / TERMS]


def get_init_inputs():
    return []


source = """
#include <torch/extension.h>
#define TERMS 160

__global__ void horner_registers(const float* x, const float* coef, float* y, int n) {
    float c[TERMS];
#pragma unroll
    for (int k = 0; k < TERMS; ++k) c[k] = coef[k];
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float v = x[i], acc = 0.0f;
#pragma unroll
        for (int k = 0; k < TERMS; ++k) acc = fmaf(acc, v, c[k]);
        y[i] = acc;
    }
}

torch::Tensor horner(torch::Tensor x, torch::Tensor coef) {
    auto y = torch::empty_like(x);
    int n = x.numel();
    horner_registers<<<132 * 4, 256>>>(x.data_ptr<float>(), coef.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

ext = load_inline(
    name="cudalens_judge_suite_03",
    cpp_sources="torch::Tensor horner(torch::Tensor x, torch::Tensor coef);",
    cuda_sources=source,
    functions=["horner"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor, coef: torch.Tensor) -> torch.Tensor:
        return ext.horner(x, coef)
