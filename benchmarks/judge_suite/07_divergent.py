"""Judge suite: divergent. Even and odd lanes of every warp evaluate different polynomials, so each warp runs
both paths with half its threads masked off."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

TERMS = 48


class Model(nn.Module):
    def forward(self, x: torch.Tensor, ca: torch.Tensor, cb: torch.Tensor) -> torch.Tensor:
        ya = torch.zeros_like(x)
        yb = torch.zeros_like(x)
        for k in range(TERMS):
            ya = ya * x + ca[k]
            yb = yb * x + cb[k]
        odd = (torch.arange(x.numel(), device=x.device) % 2) == 1
        return torch.where(odd, yb, ya)


N = 1 << 24


def get_inputs():
    return [torch.rand(N) * 0.9, torch.rand(TERMS) / TERMS, torch.rand(TERMS) / TERMS]


def get_init_inputs():
    return []


source = """
#include <torch/extension.h>
#define TERMS 48

__global__ void two_polynomials(const float* x, const float* ca, const float* cb, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i], acc = 0.0f;
    if (threadIdx.x % 2 == 1) {
        for (int k = 0; k < TERMS; ++k) acc = fmaf(acc, v, cb[k]);
    } else {
        for (int k = 0; k < TERMS; ++k) acc = fmaf(acc, v, ca[k]);
    }
    y[i] = acc;
}

torch::Tensor polys(torch::Tensor x, torch::Tensor ca, torch::Tensor cb) {
    auto y = torch::empty_like(x);
    int n = x.numel();
    two_polynomials<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), ca.data_ptr<float>(), cb.data_ptr<float>(),
                                              y.data_ptr<float>(), n);
    return y;
}
"""

ext = load_inline(
    name="cudalens_judge_suite_07",
    cpp_sources="torch::Tensor polys(torch::Tensor x, torch::Tensor ca, torch::Tensor cb);",
    cuda_sources=source,
    functions=["polys"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor, ca: torch.Tensor, cb: torch.Tensor) -> torch.Tensor:
        return ext.polys(x, ca, cb)
