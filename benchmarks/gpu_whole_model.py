"""Issue 36 on a GPU: three whole, unmodified models, each with its hot op optimized by a replayed honest Coder
(kernels written here), swapped in only where they beat what they replace, verified and timed before/after,
eager and torch.compile; the table written as markdown.

    python benchmarks/gpu_whole_model.py --out "$OUT/whole-model"     # all three, ≈ 6 minutes on an H200
    python benchmarks/gpu_whole_model.py --models diffusion           # one
    python benchmarks/gpu_whole_model.py --smoke                      # the same flow on a CPU: small models,
                                                                      # plain-torch candidates

Models: ResNet-50 (torchvision's, random weights; written out in plain torch where torchvision is missing),
batch 32, its every `batch_norm` call signature; a GPT-2 block (8×1024×1024, explicit softmax attention), its
`softmax`; a diffusion-style residual block (group_norm + SiLU + 3×3 conv, twice; 16×128×64×64), its chain
`group_norm+silu` (one problem and one kernel for the pair: SiLU is group_norm's output's only reader). For each, ONE `cudalens model FILE --problems 0 --problem OP --optimize N --rounds 1` as a user
runs it: the table and a problem per call signature of OP, the loop on each with the local OpenAI-compatible
server answering with this file's kernel (its reply picked by which problem the prompt carries), then
`--integrate`: each kernel tested and timed alone against eager and compiled PyTorch, swapped per mode only
where it wins (model/swap.py), the model verified and timed both ways. Prints each run and writes
`whole_model.md` (the issue's table) into --out; exit status 1 when a model's outputs differ or a run failed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.agents.fake_openai import FakeOpenAI, reply  # noqa: E402

RESNET = '''import torch
import torch.nn as nn

try:
    from torchvision.models import resnet50
    SOURCE = "torchvision.models.resnet50(weights=None)"
except ImportError:  # the H200 image may lack torchvision: the same network in plain torch
    SOURCE = "plain-torch ResNet-50 (torchvision is not installed)"

    class Bottleneck(nn.Module):
        def __init__(self, cin, width, stride):
            super().__init__()
            cout = width * 4
            self.conv1, self.bn1 = nn.Conv2d(cin, width, 1, bias=False), nn.BatchNorm2d(width)
            self.conv2, self.bn2 = nn.Conv2d(width, width, 3, stride, 1, bias=False), nn.BatchNorm2d(width)
            self.conv3, self.bn3 = nn.Conv2d(width, cout, 1, bias=False), nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.relu(self.bn2(self.conv2(out)))
            out = self.bn3(self.conv3(out))
            return self.relu(out + (x if self.downsample is None else self.downsample(x)))

    class ResNet50(nn.Module):
        def __init__(self, classes=1000):
            super().__init__()
            self.conv1, self.bn1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64)
            self.relu, self.maxpool = nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1)
            layers, cin = [], 64
            for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
                stage = []
                for i in range(blocks):
                    stage.append(Bottleneck(cin, width, stride if i == 0 else 1))
                    cin = width * 4
                layers.append(nn.Sequential(*stage))
            self.layer1, self.layer2, self.layer3, self.layer4 = layers
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(2048, classes)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(torch.flatten(self.avgpool(x), 1))

    def resnet50(weights=None):
        return ResNet50()


SMOKE = False  # the script's --smoke: a small batch on a CPU


def model_and_inputs():
    return resnet50(weights=None), [torch.randn(2, 3, 64, 64) if SMOKE else torch.randn(32, 3, 224, 224)]
'''

TRANSFORMER = '''import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    """A GPT-2 block with the explicit attention many codebases still use (nanoGPT's non-flash path)."""

    def __init__(self, dim=1024, heads=16, context=1024):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.c_attn, self.c_proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.c_fc, self.mlp_proj = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)
        self.heads = heads
        self.register_buffer("mask", torch.tril(torch.ones(context, context)).view(1, 1, context, context))

    def attention(self, x):
        b, t, c = x.shape
        q, k, v = self.c_attn(x).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        return self.c_proj((att @ v).transpose(1, 2).contiguous().view(b, t, c))

    def forward(self, x):
        x = x + self.attention(self.ln_1(x))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x))))


SMOKE = False  # the script's --smoke: a small block on a CPU


def model_and_inputs():
    if SMOKE:
        return Block(dim=128, heads=4, context=128), [torch.randn(2, 128, 128)]
    return Block(), [torch.randn(8, 1024, 1024)]
'''

DIFFUSION = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class ResBlock(nn.Module):
    """A diffusion U-Net's residual block (Stable Diffusion's ResnetBlock2D without the time embedding)."""

    def __init__(self, channels=128, groups=32):
        super().__init__()
        self.norm1, self.norm2 = nn.GroupNorm(groups, channels), nn.GroupNorm(groups, channels)
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        h = self.conv1(F.silu(self.norm1(x)))
        h = self.conv2(F.silu(self.norm2(h)))
        return x + h


SMOKE = False  # the script's --smoke: a small block on a CPU


def model_and_inputs():
    if SMOKE:
        return ResBlock(32, 8), [torch.randn(2, 32, 16, 16)]
    return ResBlock(), [torch.randn(16, 128, 64, 64)]
'''

# The replayed Coder's kernels: honest CUDA, each reading the call's constants (groups, eps) from the problem's
# CUDALENS_CALL, which a candidate file carries (it is the problem file with a ModelNew added).
_CALL_VALUES = '''

_VALUES = {name: want.get("value") for name, want in CUDALENS_CALL["arguments"]}
'''

BATCH_NORM = _CALL_VALUES + r'''
from torch.utils.cpp_extension import load_inline

_CUDA = """
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

// inference batch norm as one scale and shift per channel: y = x * (w / sqrt(var + eps)) + (b - mean * that).
// One (sample, channel) plane per blockIdx.x, its values along blockIdx.y and the threads: the channel's scale
// and shift computed once a block (no division per value), 32-bit indices inside the plane, float4 loads and
// stores where the plane's length is a multiple of four, floats otherwise
__device__ __forceinline__ float affine(float v, float scale, float shift) { return v * scale + shift; }

__device__ __forceinline__ float4 affine(float4 v, float scale, float shift) {
    v.x = v.x * scale + shift; v.y = v.y * scale + shift; v.z = v.z * scale + shift; v.w = v.w * scale + shift;
    return v;
}

// V: float4, or float where a plane's length is no multiple of four
template <typename V>
__global__ void bn_planes(const V* __restrict__ x, const float* __restrict__ mean, const float* __restrict__ var,
                          const float* __restrict__ w, const float* __restrict__ b, V* __restrict__ y,
                          int per_plane, int channels, float eps) {
    long long plane = blockIdx.x;
    int c = (int)(plane % channels);
    float scale = w[c] * rsqrtf(var[c] + eps), shift = b[c] - mean[c] * scale;
    const V* in = x + plane * per_plane;
    V* out = y + plane * per_plane;
    for (int i = blockIdx.y * blockDim.x + threadIdx.x; i < per_plane; i += gridDim.y * blockDim.x) {
        out[i] = affine(in[i], scale, shift);
    }
}

torch::Tensor batch_norm_infer(torch::Tensor x, torch::Tensor mean, torch::Tensor var, torch::Tensor w,
                               torch::Tensor b, double eps) {
    TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.scalar_type() == torch::kFloat32 && x.dim() >= 2,
                "contiguous fp32 CUDA input");
    auto y = torch::empty_like(x);
    int channels = (int)x.size(1);
    long long planes = x.size(0) * (long long)channels;
    long long hw = x.numel() / planes;
    TORCH_CHECK(hw < (1LL << 31) && planes < (1LL << 31), "planes and their count under 2^31");
    bool vec = hw % 4 == 0;
    long long per_plane = vec ? hw / 4 : hw;
    int threads = (int)std::min<long long>(256, (per_plane + 31) / 32 * 32);
    // about four values (or float4s) a thread: a 56x56 plane is one block of 256 threads, a 112x112 one four
    unsigned int chunks = (unsigned int)std::min<long long>((per_plane + 4LL * threads - 1) / (4LL * threads), 65535);
    dim3 grid((unsigned int)planes, chunks);
    auto stream = at::cuda::getCurrentCUDAStream();
    const float *m = mean.data_ptr<float>(), *v = var.data_ptr<float>(), *wp = w.data_ptr<float>(), *bp = b.data_ptr<float>();
    if (vec) {
        bn_planes<float4><<<grid, threads, 0, stream>>>(reinterpret_cast<const float4*>(x.data_ptr<float>()), m, v, wp,
            bp, reinterpret_cast<float4*>(y.data_ptr<float>()), (int)per_plane, channels, (float)eps);
    } else {
        bn_planes<float><<<grid, threads, 0, stream>>>(x.data_ptr<float>(), m, v, wp, bp, y.data_ptr<float>(),
            (int)per_plane, channels, (float)eps);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

_ext = load_inline("cudalens_bench_batch_norm_planes", "torch::Tensor batch_norm_infer(torch::Tensor x, torch::Tensor mean, "
                   "torch::Tensor var, torch::Tensor w, torch::Tensor b, double eps);", _CUDA,
                   functions=["batch_norm_infer"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, input, running_mean, running_var, weight, bias):
        return _ext.batch_norm_infer(input.contiguous(), running_mean, running_var, weight, bias, _VALUES["eps"])
'''

SOFTMAX = r'''
from torch.utils.cpp_extension import load_inline

_CUDA = """
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

// one warp per row of 1024 floats, held in registers (eight float4 a lane): the row is read once and written
// once (the kernel it replaces in the issue read it three times)
__global__ void softmax_rows(const float4* __restrict__ x, float4* __restrict__ y, long long rows) {
    const int V = 8;
    long long row = (long long)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    if (row >= rows) return;
    const float4* in = x + row * (32 * V);
    float4 v[V];
    float m = -INFINITY;
#pragma unroll
    for (int i = 0; i < V; ++i) {
        v[i] = in[i * 32 + lane];
        m = fmaxf(m, fmaxf(fmaxf(v[i].x, v[i].y), fmaxf(v[i].z, v[i].w)));
    }
    for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < V; ++i) {
        v[i].x = expf(v[i].x - m); v[i].y = expf(v[i].y - m); v[i].z = expf(v[i].z - m); v[i].w = expf(v[i].w - m);
        s += (v[i].x + v[i].y) + (v[i].z + v[i].w);
    }
    for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffffu, s, o);
    float inv = 1.f / s;
    float4* out = y + row * (32 * V);
#pragma unroll
    for (int i = 0; i < V; ++i) {
        v[i].x *= inv; v[i].y *= inv; v[i].z *= inv; v[i].w *= inv;
        out[i * 32 + lane] = v[i];
    }
}

torch::Tensor softmax_last(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.scalar_type() == torch::kFloat32 && x.size(-1) == 1024,
                "contiguous fp32 CUDA rows of 1024");
    auto y = torch::empty_like(x);
    long long rows = x.numel() / 1024;
    int warps = 8;
    unsigned int blocks = (unsigned int)((rows + warps - 1) / warps);
    softmax_rows<<<blocks, warps * 32, 0, at::cuda::getCurrentCUDAStream()>>>(
        reinterpret_cast<const float4*>(x.data_ptr<float>()), reinterpret_cast<float4*>(y.data_ptr<float>()), rows);
    return y;
}
"""

_ext = load_inline("cudalens_bench_softmax_1pass", "torch::Tensor softmax_last(torch::Tensor x);", _CUDA,
                   functions=["softmax_last"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, input):
        return _ext.softmax_last(input.contiguous())
'''

_GROUP_NORM_EXT = r'''
from torch.utils.cpp_extension import load_inline

_CUDA = """
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__device__ float block_sum(float v, float* partial) {
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    __syncthreads();  // the previous sum's readers are done with `partial`
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
    __syncthreads();
    float total = 0.f;
    for (int i = 0; i < blockDim.x / 32; ++i) total += partial[i];
    return total;
}

__device__ __forceinline__ float silu(float v) { return v / (1.f + expf(-v)); }

// one block per (sample, group), whose values are contiguous in NCHW: its sum, then the squares around the mean
// (two passes: exact enough for fp32), then scaled, shifted per channel and written. CACHED: the group is kept
// in shared memory as it is first read (up to ~220 KB a group), so DRAM sees one read and one write whatever
// L2 holds; otherwise the two re-reads go to L2 (they hit it while the tensor fits there). SILU: the SiLU that
// reads group_norm's output (a chain's problem) applied as each value is written: no pass of its own
template <bool CACHED, bool SILU>
__global__ void group_norm_rows(const float4* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
                                float4* __restrict__ y, int groups, int per_group, int hw4, float eps) {
    extern __shared__ float4 cache[];
    __shared__ float partial[32];
    int n4 = per_group * hw4;
    long long base = (long long)blockIdx.x * n4;
    const float4* in = x + base;
    float s = 0.f;
#pragma unroll 4
    for (int i = threadIdx.x; i < n4; i += blockDim.x) {
        float4 v = in[i];
        if (CACHED) cache[i] = v;
        s += (v.x + v.y) + (v.z + v.w);
    }
    float count = 4.f * n4;
    float mean = block_sum(s, partial) / count;  // its barriers also publish `cache`
    float q = 0.f;
#pragma unroll 4
    for (int i = threadIdx.x; i < n4; i += blockDim.x) {
        float4 v = CACHED ? cache[i] : in[i];
        float a = v.x - mean, c = v.y - mean, d = v.z - mean, e = v.w - mean;
        q += (a * a + c * c) + (d * d + e * e);
    }
    float rstd = rsqrtf(block_sum(q, partial) / count + eps);
    int first = (blockIdx.x % groups) * per_group;
    float4* out = y + base;
#pragma unroll 4
    for (int i = threadIdx.x; i < n4; i += blockDim.x) {
        int c = first + i / hw4;
        float scale = rstd * w[c], shift = b[c] - mean * scale;
        float4 v = CACHED ? cache[i] : in[i];
        v.x = v.x * scale + shift; v.y = v.y * scale + shift; v.z = v.z * scale + shift; v.w = v.w * scale + shift;
        if (SILU) { v.x = silu(v.x); v.y = silu(v.y); v.z = silu(v.z); v.w = silu(v.w); }
        out[i] = v;
    }
}

// dynamic shared memory past 48 KB must be asked for, per kernel (once for the largest size asked: a driver
// call a forward is host time a short forward does not have)
template <bool SILU>
__host__ void allow_shared(size_t bytes) {
    static size_t allowed = 0;
    if (bytes > allowed) {
        cudaFuncSetAttribute(group_norm_rows<true, SILU>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
        allowed = bytes;
    }
}

template <bool SILU>
torch::Tensor group_norm_launch(torch::Tensor x, torch::Tensor w, torch::Tensor b, int64_t groups, double eps) {
    TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.scalar_type() == torch::kFloat32 && x.dim() >= 3,
                "contiguous fp32 CUDA input");
    int channels = x.size(1);
    long long hw = x.numel() / (x.size(0) * channels);
    TORCH_CHECK(channels % groups == 0 && hw % 4 == 0, "channels a multiple of groups, planes a multiple of 4");
    auto y = torch::empty_like(x);
    unsigned int blocks = (unsigned int)(x.size(0) * groups);
    int per_group = (int)(channels / groups), hw4 = (int)(hw / 4);
    size_t bytes = (size_t)per_group * hw4 * sizeof(float4);
    int optin = 0;
    cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, x.get_device());
    auto stream = at::cuda::getCurrentCUDAStream();
    const float4* in = reinterpret_cast<const float4*>(x.data_ptr<float>());
    float4* out = reinterpret_cast<float4*>(y.data_ptr<float>());
    if (bytes + 32 * sizeof(float) <= (size_t)optin) {
        allow_shared<SILU>(bytes);
        group_norm_rows<true, SILU><<<blocks, 1024, bytes, stream>>>(in, w.data_ptr<float>(), b.data_ptr<float>(), out,
                                                               (int)groups, per_group, hw4, (float)eps);
    } else {
        group_norm_rows<false, SILU><<<blocks, 1024, 0, stream>>>(in, w.data_ptr<float>(), b.data_ptr<float>(), out,
                                                            (int)groups, per_group, hw4, (float)eps);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}

torch::Tensor group_norm_fwd(torch::Tensor x, torch::Tensor w, torch::Tensor b, int64_t groups, double eps,
                             bool silu) {
    return silu ? group_norm_launch<true>(x, w, b, groups, eps) : group_norm_launch<false>(x, w, b, groups, eps);
}
"""

_ext = load_inline("cudalens_bench_group_norm_silu", "torch::Tensor group_norm_fwd(torch::Tensor x, torch::Tensor w, "
                   "torch::Tensor b, int64_t groups, double eps, bool silu);", _CUDA,
                   functions=["group_norm_fwd"], extra_cuda_cflags=["-O3"], verbose=False)
'''

GROUP_NORM = _CALL_VALUES + _GROUP_NORM_EXT + '''

class ModelNew(nn.Module):
    def forward(self, input, weight, bias):
        return _ext.group_norm_fwd(input.contiguous(), weight, bias, _VALUES["num_groups"], _VALUES["eps"], False)
'''

# the chain group_norm -> SiLU (a problem for the pair: its inputs are group_norm's, its constants group_norm's):
# the same kernel, the SiLU applied as each value is written, so the pair costs one read and one write
GROUP_NORM_SILU = _CALL_VALUES + _GROUP_NORM_EXT + '''

class ModelNew(nn.Module):
    def forward(self, input, weight, bias):
        return _ext.group_norm_fwd(input.contiguous(), weight, bias, _VALUES["num_groups"], _VALUES["eps"], True)
'''

# --smoke: the same math in plain torch, so that the whole flow runs on a CPU (with --allow-torch-ops)
SMOKE_KERNELS = {
    "batch_norm": _CALL_VALUES + '''

class ModelNew(nn.Module):
    def forward(self, input, running_mean, running_var, weight, bias):
        scale = weight * torch.rsqrt(running_var + _VALUES["eps"])
        shape = (1, -1) + (1,) * (input.dim() - 2)
        return input * scale.view(shape) + (bias - running_mean * scale).view(shape)
''',
    "softmax": '''

class ModelNew(nn.Module):
    def forward(self, input):
        e = torch.exp(input - input.amax(dim=-1, keepdim=True))
        return e / e.sum(dim=-1, keepdim=True)
''',
    "group_norm": _CALL_VALUES + '''

class ModelNew(nn.Module):
    def forward(self, input, weight, bias):
        n, c = input.shape[:2]
        rows = input.reshape(n, _VALUES["num_groups"], -1)
        var, mean = torch.var_mean(rows, dim=-1, keepdim=True, correction=0)
        normed = ((rows - mean) * torch.rsqrt(var + _VALUES["eps"])).reshape(n, c, -1)
        return (normed * weight.view(1, c, 1) + bias.view(1, c, 1)).reshape(input.shape)
''',
}
SMOKE_KERNELS["group_norm+silu"] = SMOKE_KERNELS["group_norm"] + '''

_GROUP_NORM = ModelNew


class ModelNew(_GROUP_NORM):
    def forward(self, input, weight, bias):
        return torch.nn.functional.silu(super().forward(input, weight, bias))
'''


@dataclass(frozen=True)
class Case:
    title: str  # the table's name for the model
    source: str
    op: str  # the function whose every call signature gets a problem and a kernel
    kernel: str  # the replayed Coder's kernel, appended to each problem
    problems: int  # --optimize N: the loop on the first N problems (by time)


CASES = {
    "diffusion": Case("diffusion block (group_norm + SiLU), 16×128×64×64", DIFFUSION, "group_norm+silu",
                      GROUP_NORM_SILU, 1),
    "transformer": Case("GPT-2 block, 8×1024×1024", TRANSFORMER, "softmax", SOFTMAX, 1),
    "resnet50": Case("ResNet-50, batch 32", RESNET, "batch_norm", BATCH_NORM, 2),
}
KEY = "CUDALENS_BENCH_KEY"


def responder(out: Path, kernel: str):
    """The replayed Coder: the problem whose text the prompt quotes, with the kernel appended."""
    def answer(body: dict):
        prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        for problem in sorted(out.glob("*.py")):
            text = problem.read_text()
            if not problem.name.endswith(".optimized.py") and "CUDALENS_CALL" in text and text.strip() in prompt:
                return reply(f"Here is the kernel.\n\n```python\n{text + kernel}```\n")
        return reply("I cannot tell which problem this is.")

    return answer


def run_case(name: str, case: Case, folder: Path, args: argparse.Namespace, timeout: float) -> dict:
    model = folder / f"{name}.py"
    model.write_text(case.source.replace("SMOKE = False", f"SMOKE = {args.smoke}"))
    out = folder / name
    kernel = SMOKE_KERNELS[case.op] if args.smoke else case.kernel
    argv = [str(model), "--problems", "0", "--problem", case.op, "--out", str(out), "--optimize", str(case.problems),
            "--rounds", "1", "--no-profile", "--api-key-env", KEY, "--top", "8", "--format", "json",
            *(["--device", "cpu", "--allow-torch-ops", "--iters", "1"] if args.smoke else [])]
    print(f"$ cudalens model {' '.join(argv)}", flush=True)
    started = time.monotonic()
    with FakeOpenAI(responder=responder(out, kernel)) as fake:
        done = _run_timed([sys.executable, "-m", "cudalens", "model", *argv, "--base-url", fake.base_url], folder,
                          {**os.environ, KEY: "sk-bench-not-a-real-key",
                           "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))},
                          timeout, started)
        asked = len(fake.requests)
    print(f"  ({time.monotonic() - started:.0f} s, {asked} Coder request(s), exit {done.returncode})", flush=True)
    try:
        result = json.loads(done.stdout)
    except json.JSONDecodeError:
        print(done.stdout)
        return {"name": name, "case": case, "error": f"exit {done.returncode}: no result (see the log above)"}
    print(_integration_text(result["integration"]))
    print("  where --integrate's time went: " + ", ".join(f"{stage} {s:.0f} s"
                                                         for stage, s in result["integration"].get("seconds", ())))
    return {"name": name, "case": case, "result": result}


def _run_timed(argv: list[str], cwd: Path, env: dict, timeout: float, started: float) -> subprocess.CompletedProcess:
    """`subprocess.run` that prints each line of stderr as it comes, after the seconds since `started`: where a
    model's time goes (the profile, each problem's loop, the integration), also when the deadline cuts it."""
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout: list[str] = []
    reader = threading.Thread(target=lambda: stdout.append(proc.stdout.read()), daemon=True)
    reader.start()
    killer = threading.Timer(timeout, proc.kill)
    killer.start()
    try:
        for line in proc.stderr:
            if not line.startswith("USDT"):
                print(f"  | {time.monotonic() - started:4.0f} s  {line.rstrip()}", flush=True)
        proc.wait()
    finally:
        killer.cancel()
    reader.join()
    if proc.returncode < 0 and time.monotonic() - started >= timeout:
        raise subprocess.TimeoutExpired(argv, timeout)
    return subprocess.CompletedProcess(argv, proc.returncode, "".join(stdout), "")


def _median(m: dict | None) -> float | None:
    return statistics.median(m["samples_ms"]) if m and m.get("samples_ms") else None


def _integration_text(d: dict) -> str:
    """What `cudalens model --integrate` prints, from its JSON (model/verify.py's render)."""
    from cudalens.model.verify import Integration, render

    return render(Integration.from_json(d))


def markdown(rows: list[dict], header: str) -> str:
    """The issue's table: op alone (kernel vs eager, vs torch.compile), the whole model eager and compiled."""
    lines = [header, "",
             "| model | op (call signatures) | op alone vs eager | op alone vs torch.compile | whole model, eager | "
             "whole model, torch.compile |",
             "|---|---|---|---|---|---|"]
    for row in rows:
        case = row["case"]
        if "error" in row:
            lines.append(f"| {case.title} | `{case.op}` | {row['error']} | | | |")
            continue
        d = row["result"]["integration"]
        tests = d["tests"]
        passed = [t for t in tests if t["passed"]]
        alone = {}
        for mode in ("eager", "compiled"):
            speedups = [x["speedup"] for t in passed for x in t["decisions"] if x["mode"] == mode and x["speedup"]]
            swapped = sum(1 for t in passed for x in t["decisions"] if x["mode"] == mode and x["swapped"])
            alone[mode] = (f"{min(speedups):.2f}×" + (f"–{max(speedups):.2f}×" if len(speedups) > 1 else "")
                           + f", swapped {swapped}/{len(tests)}") if speedups else "not timed"
        whole = {}
        for mode in ("eager", "compiled"):
            pair = (d.get("timings") or {}).get(mode)
            if not pair:
                whole[mode] = "not timed"
                continue
            before, after = _median(pair[0]), _median(pair[1])
            kept = any(x["mode"] == mode and x["swapped"] for t in passed for x in t["decisions"])
            if after is None:
                whole[mode] = f"{before:.3f} ms, nothing swapped (1.00×)"
            elif not kept:
                whole[mode] = f"{before:.3f} ms; {after:.3f} ms with the kernels ({before / after:.2f}×): not kept (1.00×)"
            else:
                whole[mode] = f"{before:.3f} → {after:.3f} ms (**{before / after:.2f}×**)"
        bad = [c for c in (*d.get("checks", ()), *d.get("compiled_checks", ())) if not c["passed"]]
        if bad:
            whole["eager"] += f"; outputs differ: {bad[0]['message']}"
        failed = len(tests) - len(passed)
        op = f"`{case.op}` ({len(tests)}" + (f", {failed} failed their test" if failed else "") + ")"
        lines.append(f"| {case.title} | {op} | {alone['eager']} | {alone['compiled']} | {whole['eager']} | "
                     f"{whole['compiled']} |")
    lines += ["", "Why each kernel was or was not swapped (model/swap.py):", ""]
    for row in rows:
        for t in row.get("result", {}).get("integration", {}).get("tests", ()):
            reasons = "; ".join(x["reason"] for x in t.get("decisions", ())) or t["message"]
            lines.append(f"- {row['name']}, `{Path(t['candidate']['candidate']).name}`: {reasons}")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(CASES), help=f"comma-separated, of {', '.join(CASES)}")
    parser.add_argument("--out", help="where the files and whole_model.md go (default: a temporary folder)")
    parser.add_argument("--smoke", action="store_true", help="small models, plain-torch candidates, on the CPU")
    parser.add_argument("--deadline", type=float, default=540.0, help="seconds for all the models together")
    args = parser.parse_args()
    names = [n.strip() for n in args.models.split(",") if n.strip()]
    if unknown := [n for n in names if n not in CASES]:
        parser.error(f"unknown model(s) {', '.join(unknown)}: choose from {', '.join(CASES)}")
    folder = Path(args.out or tempfile.mkdtemp(prefix="cudalens-whole-model-")).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    import importlib.util

    import torch

    gpu = torch.cuda.get_device_name() if torch.cuda.is_available() else "no GPU"
    resnet = ("torchvision.models.resnet50(weights=None)" if importlib.util.find_spec("torchvision")
              else "the plain-torch ResNet-50 written in this script (torchvision is not installed)")
    header = (f"Measured {time.strftime('%Y-%m-%d')} on {gpu}, torch {torch.__version__}; ResNet-50: {resnet}"
              + ("; --smoke (small models, plain-torch candidates, CPU)" if args.smoke else ""))
    print(header, flush=True)
    end = time.monotonic() + args.deadline
    rows = []
    for name in names:
        left = end - time.monotonic()
        if left < 30:
            rows.append({"name": name, "case": CASES[name], "error": "not run: the deadline had passed"})
            continue
        try:
            rows.append(run_case(name, CASES[name], folder, args, left))
        except subprocess.TimeoutExpired:
            # the case as a whole, not one of its tests: what the models before it left of --deadline
            rows.append({"name": name, "case": CASES[name],
                         "error": f"stopped at the deadline: the {left:.0f} s the models before it left were not enough"})
        (folder / "whole_model.md").write_text(markdown(rows, header))  # what is done survives a later stop
    table = markdown(rows, header)
    (folder / "whole_model.md").write_text(table)
    print(table)
    print(f"files in {folder}; the table: {folder / 'whole_model.md'}")
    ok = all("error" not in r and r["result"].get("passed") for r in rows)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
