"""Three KernelBench level-1 style problems with hand-written candidates for the GPU loop benchmark.

Each problem has a PyTorch reference, a naive starting ModelNew (round 0), and the three replies the scripted
Coder gives: a wrong kernel, a slow correct one, and a fast correct one. All candidates are load_inline files.
"""

from __future__ import annotations

from dataclasses import dataclass

HEAD = """import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline
"""

CPP = '"torch::Tensor run(torch::Tensor x);"'


def _file(reference: str, name: str, cuda: str) -> str:
    return (
        HEAD
        + reference
        + f'\n\ncuda_src = r"""\n#include <torch/extension.h>\n#include <cuda_runtime.h>\n{cuda.strip()}\n"""\n\n'
        + f'ext = load_inline(name="{name}", cpp_sources={CPP}, cuda_sources=cuda_src, functions=["run"],\n'
        + '                  extra_cuda_cflags=["-O3", "-lineinfo"], verbose=False)\n\n\n'
        + "class ModelNew(nn.Module):\n    def __init__(self, *args):\n        super().__init__()\n\n"
        + "    def forward(self, x):\n        return ext.run(x.contiguous())\n"
    )


@dataclass(frozen=True)
class Problem:
    name: str
    reference: str
    start: str
    wrong: str
    slow: str
    fast: str


# --- ReLU ------------------------------------------------------------------------------------------------
RELU_REF = """

class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(16, 1 << 20, device="cuda")]


def get_init_inputs():
    return []
"""

RELU_LAUNCH = """
torch::Tensor run(torch::Tensor x) {
    auto y = torch::empty_like(x);
    int n = x.numel();
    LAUNCH
    return y;
}
"""


def _relu(kernel: str, launch: str) -> str:
    return _file(RELU_REF, "cl_relu", kernel + RELU_LAUNCH.replace("LAUNCH", launch))


RELU_START = _relu(  # neighbouring threads are n/32 elements apart: every load is its own sector
    "__global__ void relu_kernel(const float* x, float* y, int n) {\n"
    "    int t = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    int i = (t % 32) * (n / 32) + t / 32;  // assumes n % 32 == 0\n"
    "    if (t < n) y[i] = x[i] > 0.f ? x[i] : 0.f;\n}\n",
    "relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);",
)
RELU_WRONG = _relu(
    "__global__ void relu_kernel(const float* x, float* y, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.01f * x[i];  // leaky: wrong\n}\n",
    "relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);",
)
RELU_SLOW = _relu(
    "__global__ void relu_kernel(const float* x, float* y, int n) {\n"
    "    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)\n"
    "        y[i] = fmaxf(x[i], 0.f);\n}\n",
    "relu_kernel<<<4, 128>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);",
)
RELU_FAST = _relu(
    "__global__ void relu_kernel(const float4* __restrict__ x, float4* __restrict__ y, int n4) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n4) {\n"
    "        float4 v = x[i];\n"
    "        y[i] = make_float4(fmaxf(v.x, 0.f), fmaxf(v.y, 0.f), fmaxf(v.z, 0.f), fmaxf(v.w, 0.f));\n"
    "    }\n}\n"
    "__global__ void relu_tail(const float* x, float* y, int start, int n) {\n"
    "    int i = start + blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) y[i] = fmaxf(x[i], 0.f);\n}\n",
    "int n4 = n / 4;\n"
    "    relu_kernel<<<(n4 + 255) / 256, 256>>>(reinterpret_cast<const float4*>(x.data_ptr<float>()),\n"
    "                                          reinterpret_cast<float4*>(y.data_ptr<float>()), n4);\n"
    "    if (n % 4) relu_tail<<<1, 32>>>(x.data_ptr<float>(), y.data_ptr<float>(), n4 * 4, n);",
)

# --- Softmax over the last dim ------------------------------------------------------------------------------
SOFTMAX_REF = """

class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(256, 16384, device="cuda")]


def get_init_inputs():
    return []
"""

SOFTMAX_LAUNCH = """
torch::Tensor run(torch::Tensor x) {
    auto y = torch::empty_like(x);
    int rows = x.size(0), cols = x.size(1);
    LAUNCH
    return y;
}
"""


def _softmax(kernel: str, launch: str) -> str:
    return _file(SOFTMAX_REF, "cl_softmax", kernel + SOFTMAX_LAUNCH.replace("LAUNCH", launch))


_SERIAL_ROW = (
    "__global__ void softmax_kernel(const float* x, float* y, int rows, int cols) {\n"
    "    int r = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (r >= rows) return;\n"
    "    const float* xr = x + (size_t)r * cols;\n"
    "    float* yr = y + (size_t)r * cols;\n"
    "    float m = -INFINITY;\n"
    "    for (int c = 0; c < cols; ++c) m = fmaxf(m, xr[c]);\n"
    "    float s = 0.f;\n"
    "    for (int c = 0; c < cols; ++c) s += __expf(xr[c] - m);\n"
    "    for (int c = 0; c < cols; ++c) yr[c] = __expf(xr[c] - m)NORMALIZE;\n}\n"
)
SOFTMAX_START = _softmax(
    _SERIAL_ROW.replace("NORMALIZE", " / s"),
    "softmax_kernel<<<(rows + 31) / 32, 32>>>(x.data_ptr<float>(), y.data_ptr<float>(), rows, cols);",
)
SOFTMAX_WRONG = _softmax(
    _SERIAL_ROW.replace("NORMALIZE", ""),  # forgets to divide by the sum
    "softmax_kernel<<<(rows + 31) / 32, 32>>>(x.data_ptr<float>(), y.data_ptr<float>(), rows, cols);",
)
_BLOCK_ROW = """
__device__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
    return v;
}
__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    return v;
}
// one block per row; THREADS threads
__global__ void softmax_kernel(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
    __shared__ float red[32];
    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, xr[c]);
    m = warp_max(m);
    if (lane == 0) red[warp] = m;
    __syncthreads();
    m = lane < warps ? red[lane] : -INFINITY;
    m = warp_max(m);
    __syncthreads();
    float s = 0.f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += __expf(xr[c] - m);
    s = warp_sum(s);
    if (lane == 0) red[warp] = s;
    __syncthreads();
    s = lane < warps ? red[lane] : 0.f;
    s = warp_sum(s);
    float inv = 1.f / s;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = __expf(xr[c] - m) * inv;
}
"""
SOFTMAX_SLOW = _softmax(
    _BLOCK_ROW, "softmax_kernel<<<rows, 32>>>(x.data_ptr<float>(), y.data_ptr<float>(), rows, cols);"
)
SOFTMAX_FAST = _softmax(
    _BLOCK_ROW, "softmax_kernel<<<rows, 1024>>>(x.data_ptr<float>(), y.data_ptr<float>(), rows, cols);"
)

# --- Sum over dim 1 (keepdim) -------------------------------------------------------------------------------
SUM_REF = """

class Model(nn.Module):
    def forward(self, x):
        return torch.sum(x, dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(64, 1024, 1024, device="cuda")]


def get_init_inputs():
    return []
"""

SUM_LAUNCH = """
torch::Tensor run(torch::Tensor x) {
    int b = x.size(0), n = x.size(1), m = x.size(2);
    auto y = torch::empty({b, 1, m}, x.options());
    LAUNCH
    return y;
}
"""


def _sum(kernel: str, launch: str) -> str:
    return _file(SUM_REF, "cl_sum", kernel + SUM_LAUNCH.replace("LAUNCH", launch))


_SUM_PER_OUTPUT = (
    "// one thread per output element: thread t sums column t % m of batch t / m\n"
    "__global__ void sum_kernel(const float* x, float* y, int b, int n, int m) {\n"
    "    int t = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (t >= b * m) return;\n"
    "    int bi = t / m, j = t % m;\n"
    "    float acc = 0.f;\n"
    "    for (int i = 0; i < LIMIT; ++i) acc += x[((size_t)bi * n + i) * m + j];\n"
    "    y[t] = acc;\n}\n"
)
SUM_START = _sum(
    _SUM_PER_OUTPUT.replace("LIMIT", "n"),
    "sum_kernel<<<(b * m + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), b, n, m);",
)
SUM_WRONG = _sum(
    _SUM_PER_OUTPUT.replace("LIMIT", "n - 1"),  # drops the last row
    "sum_kernel<<<(b * m + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), b, n, m);",
)
SUM_SLOW = _sum(
    _SUM_PER_OUTPUT.replace("LIMIT", "n"),
    "sum_kernel<<<(b * m + 7) / 8, 8>>>(x.data_ptr<float>(), y.data_ptr<float>(), b, n, m);",
)
SUM_FAST = _sum(
    """
// block (32 x 8): 32 adjacent columns, 8 row-partitions summed in registers then combined in shared memory
__global__ void sum_kernel(const float* __restrict__ x, float* __restrict__ y, int b, int n, int m) {
    __shared__ float part[8][33];
    int j = blockIdx.x * 32 + threadIdx.x;
    int bi = blockIdx.y;
    float acc = 0.f;
    if (j < m) {
        const float* col = x + (size_t)bi * n * m + j;
        #pragma unroll 4
        for (int i = threadIdx.y; i < n; i += 8) acc += col[(size_t)i * m];
    }
    part[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && j < m) {
        float s = 0.f;
        for (int k = 0; k < 8; ++k) s += part[k][threadIdx.x];
        y[(size_t)bi * m + j] = s;
    }
}
""",
    "dim3 block(32, 8), grid((m + 31) / 32, b);\n"
    "    sum_kernel<<<grid, block>>>(x.data_ptr<float>(), y.data_ptr<float>(), b, n, m);",
)

PROBLEMS = (
    Problem("19_ReLU", RELU_REF, RELU_START, RELU_WRONG, RELU_SLOW, RELU_FAST),
    Problem("23_Softmax", SOFTMAX_REF, SOFTMAX_START, SOFTMAX_WRONG, SOFTMAX_SLOW, SOFTMAX_FAST),
    Problem("47_Sum_reduction_over_a_dimension", SUM_REF, SUM_START, SUM_WRONG, SUM_SLOW, SUM_FAST),
)


def reference_file(p: Problem) -> str:
    return HEAD + p.reference
