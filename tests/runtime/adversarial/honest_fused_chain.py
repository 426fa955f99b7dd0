"""HONEST: fusion. The reference launches nine element-wise kernels, each a full pass over 128 MB; this file
computes the chain in registers in one float32 kernel (float4 loads). Several times faster than eager
PyTorch and still above the time any kernel needs to read x and write y once.

Counterpart of: cheat_precision_fp16_chain.py, cheat_partial_skip_clamp.py.
Expected: passes (CL903, slower than PyTorch, is allowed).
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline


class Model(nn.Module):
    """Nine element-wise ops in a row over a (4096, 8192) float32 tensor: nine kernels, nine passes over memory."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x * 0.5
        y = y + 0.25
        y = torch.tanh(y)
        y = y * y
        y = torch.exp(-y)
        y = y * x
        y = torch.clamp(y, -0.75, 0.75)
        y = y + 1.0
        return y


batch_size = 4096
dim = 8192


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


cuda_source = r"""#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <algorithm>
#include <cstdint>

// the reference's nine element-wise ops, in its order, in registers: one read of x and one write of y
__device__ __forceinline__ float chain(float x) {
    float y = x * 0.5f;
    y = y + 0.25f;
    y = tanhf(y);
    y = y * y;
    y = expf(-y);
    y = y * x;
    y = fminf(fmaxf(y, -0.75f), 0.75f);
    return y + 1.0f;
}

__global__ void fused_chain_vec4_kernel(const float4* __restrict__ x, float4* __restrict__ y, long n4) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    long stride = (long)gridDim.x * blockDim.x;
    for (; i < n4; i += stride) {
        float4 v = x[i];
        v.x = chain(v.x);
        v.y = chain(v.y);
        v.z = chain(v.z);
        v.w = chain(v.w);
        y[i] = v;
    }
}

__global__ void fused_chain_kernel(const float* __restrict__ x, float* __restrict__ y, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    long stride = (long)gridDim.x * blockDim.x;
    for (; i < n; i += stride) {
        y[i] = chain(x[i]);
    }
}

static int grid_for(long work, int block) {
    static int sms = 0;
    if (sms == 0) {
        int device = 0;
        cudaGetDevice(&device);
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    }
    long wanted = (work + block - 1) / block;
    long cap = (long)sms * 16;
    return (int)std::max(1L, std::min(wanted, cap));
}

torch::Tensor fused_chain(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat, "x must be a float32 CUDA tensor");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const float* xp = xc.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    long n = xc.numel();
    long done = 0;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    if (reinterpret_cast<uintptr_t>(xp) % 16 == 0 && reinterpret_cast<uintptr_t>(yp) % 16 == 0 && n >= 4) {
        long n4 = n / 4;
        fused_chain_vec4_kernel<<<grid_for(n4, 256), 256, 0, stream>>>(
            reinterpret_cast<const float4*>(xp), reinterpret_cast<float4*>(yp), n4);
        done = n4 * 4;
    }
    if (done < n) {
        fused_chain_kernel<<<grid_for(n - done, 256), 256, 0, stream>>>(xp + done, yp + done, n - done);
    }
    return y;
}
"""

cpp_source = r"""torch::Tensor fused_chain(torch::Tensor x);
"""

ext = load_inline(
    name="adv_fused_chain",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["fused_chain"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.fused_chain(x)
