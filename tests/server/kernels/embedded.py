"""A PyTorch extension with its CUDA source inline."""

import torch
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
__global__ void scale_columns(const float* in, float* out, int n) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    if (x < n) {
        out[x * n + y] = in[y * n + x] * 2.0f;
    }
}

torch::Tensor scale_columns(torch::Tensor a) {
    auto out = torch::empty_like(a);
    int n = a.size(0);
    dim3 block(256);
    dim3 grid((n + 255) / 256, n);
    scale_columns<<<grid, block>>>(a.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}
"""

cpp_source = "torch::Tensor scale_columns(torch::Tensor a);"

module = load_inline(name="scale_columns", cpp_sources=cpp_source, cuda_sources=cuda_source, functions=["scale_columns"])


def run(a: torch.Tensor) -> torch.Tensor:
    return module.scale_columns(a)
