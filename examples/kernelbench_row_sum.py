"""A KernelBench-style problem and candidate: `Model` is the PyTorch reference (a sum over the last
dimension), `ModelNew` replaces it with an inline CUDA kernel built by `load_inline`.

What it shows: the kernel gives each thread one row and walks along it, so at every step consecutive
lanes read addresses `cols` floats apart — each warp-wide load touches 32 sectors instead of 4.
Expect: CL1xx uncoalesced global load on `x[row * cols + c]` (stride = cols elements, a runtime value,
so the finding says the stride depends on `cols`); the fix is one warp (or block) per row with lanes
walking the columns. Run `cudalens test examples/kernelbench_row_sum.py` on a GPU to check it against
`Model`.
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

row_sum_source = r"""
#include <torch/extension.h>

__global__ void row_sum_kernel(const float* x, float* out, int rows, int cols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        float acc = 0.0f;
        for (int c = 0; c < cols; ++c) {
            acc += x[row * cols + c];
        }
        out[row] = acc;
    }
}

torch::Tensor row_sum_cuda(torch::Tensor x) {
    auto out = torch::empty({x.size(0)}, x.options());
    int rows = x.size(0), cols = x.size(1);
    const int threads = 256;
    row_sum_kernel<<<(rows + threads - 1) / threads, threads>>>(
        x.data_ptr<float>(), out.data_ptr<float>(), rows, cols);
    return out;
}
"""

row_sum_cpp_source = "torch::Tensor row_sum_cuda(torch::Tensor x);"

row_sum = load_inline(
    name="row_sum",
    cpp_sources=row_sum_cpp_source,
    cuda_sources=row_sum_source,
    functions=["row_sum_cuda"],
    verbose=False,
)


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=1)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.row_sum = row_sum

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.row_sum.row_sum_cuda(x.contiguous())


batch_size = 4096
dim = 4096


def get_inputs():
    return [torch.randn(batch_size, dim, device="cuda")]


def get_init_inputs():
    return []
