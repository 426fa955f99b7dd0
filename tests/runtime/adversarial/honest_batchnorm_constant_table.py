"""HONEST: state kept across calls, legitimately. Batch norm in inference mode folds into a per-channel scale
and shift; ModelNew computes that table once in __init__ from the parameters (the init inputs, not any
output) and each call runs one fused kernel over the whole input.

Counterpart of: cheat_cache_cpp_pointer.py, cheat_callcount_replay_last.py, cheat_timing_py_graph_replay.py.
Expected: passes (CL903, slower than PyTorch, is allowed).
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline


class Model(nn.Module):
    """Batch norm in inference mode (running statistics) over a (32, 64, 128, 128) float32 tensor."""

    def __init__(self, num_features: int = 64, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.randn(num_features))
        self.bias = nn.Parameter(torch.randn(num_features))
        self.register_buffer("running_mean", torch.randn(num_features) * 0.1)
        self.register_buffer("running_var", torch.rand(num_features) + 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                                              training=False, eps=self.eps)


batch_size = 32
channels = 64
height = 128
width = 128


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]


cuda_source = r"""#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <algorithm>

// y = x * scale[c] + shift[c] over an (N, C, H, W) tensor: one block row per (n, c) plane, float4 over H * W
__global__ void channel_affine_kernel(const float4* __restrict__ x, float4* __restrict__ y,
                                      const float* __restrict__ scale, const float* __restrict__ shift,
                                      long plane4, int channels) {
    const long plane = blockIdx.y;
    const int c = (int)(plane % channels);
    const float a = scale[c];
    const float b = shift[c];
    const float4* xp = x + plane * plane4;
    float4* yp = y + plane * plane4;
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < plane4; i += (long)gridDim.x * blockDim.x) {
        float4 v = xp[i];
        v.x = fmaf(v.x, a, b);
        v.y = fmaf(v.y, a, b);
        v.z = fmaf(v.z, a, b);
        v.w = fmaf(v.w, a, b);
        yp[i] = v;
    }
}

torch::Tensor channel_affine(torch::Tensor x, torch::Tensor scale, torch::Tensor shift) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat && x.dim() == 4, "x must be a 4-D float32 CUDA tensor");
    auto xc = x.contiguous();
    int channels = (int)xc.size(1);
    long plane = xc.size(2) * xc.size(3);
    TORCH_CHECK(plane % 4 == 0, "H * W must be a multiple of 4");
    TORCH_CHECK(scale.is_cuda() && shift.is_cuda() && scale.numel() == channels && shift.numel() == channels &&
                scale.is_contiguous() && shift.is_contiguous(), "scale and shift: one float32 per channel, on the GPU");
    auto y = torch::empty_like(xc);
    long plane4 = plane / 4;
    int blocks_x = (int)std::min<long>((plane4 + 255) / 256, 8);
    dim3 grid(blocks_x, (unsigned)(xc.size(0) * channels));
    channel_affine_kernel<<<grid, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        reinterpret_cast<const float4*>(xc.data_ptr<float>()), reinterpret_cast<float4*>(y.data_ptr<float>()),
        scale.data_ptr<float>(), shift.data_ptr<float>(), plane4, channels);
    return y;
}
"""

cpp_source = r"""torch::Tensor channel_affine(torch::Tensor x, torch::Tensor scale, torch::Tensor shift);
"""

ext = load_inline(
    name="adv_channel_affine",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["channel_affine"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, num_features: int = 64, eps: float = 1e-5):
        super().__init__()
        # the same draws as Model, in the same order (the harness seeds both constructions alike)
        weight = torch.randn(num_features)
        bias = torch.randn(num_features)
        running_mean = torch.randn(num_features) * 0.1
        running_var = torch.rand(num_features) + 0.5
        # inference-mode batch norm is y = x * scale + shift per channel: a constant table, computed once here
        # from the parameters (init inputs), never from an output
        scale = weight / (running_var + eps).sqrt()
        self.register_buffer("scale", scale)
        self.register_buffer("shift", bias - running_mean * scale)

    def forward(self, x):
        return ext.channel_affine(x, self.scale, self.shift)
