"""KernelBench level 1, problem 19 (ReLU) shape, with an inline-CUDA ModelNew (right)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


batch_size = 1024
dim = 4096


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


relu_source = """
#include <torch/extension.h>

__global__ void relu_kernel(const float* x, float* y, int size) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < size) {
        y[idx] = x[idx] > 0.0f ? x[idx] : 0.0f;
    }
}

torch::Tensor relu_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    int size = x.numel();
    relu_kernel<<<(size + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), size);
    return y;
}
"""

relu = load_inline(
    name="cudalens_test_relu_right",
    cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);",
    cuda_sources=relu_source,
    functions=["relu_cuda"],
    extra_cuda_cflags=["-O3", "-lineinfo"],
)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return relu.relu_cuda(x)
