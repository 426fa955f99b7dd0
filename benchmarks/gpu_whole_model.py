"""Issue 18 on a GPU: a whole, unmodified model's hot-op table, one op optimized with a replayed Coder, the
kernel swapped into the model, the model verified and timed before/after, eager and torch.compile.

    python benchmarks/gpu_whole_model.py resnet50      # torchvision's ResNet-50 (random weights), batch 32
    python benchmarks/gpu_whole_model.py transformer   # a GPT-2-style block, explicit softmax attention

Each runs `cudalens model` as a user does, in two steps: the table and its problem files; then, for the op
named by --op (adaptive_avg_pool2d, softmax), `--optimize 1 --rounds 1` with the local OpenAI-compatible
server replaying one real CUDA kernel for that problem, which `--integrate` swaps into the model. When
torchvision is missing, ResNet-50 is written out below in plain torch (the same bottleneck layers) and the
output says so. Prints the table, the loop's summary and the integration's figures; exit status 1 when the
whole model's outputs differ.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
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


def model_and_inputs():
    return resnet50(weights=None), [torch.randn(32, 3, 224, 224)]
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


def model_and_inputs():
    return Block(), [torch.randn(8, 1024, 1024)]
'''

AVG_POOL = r'''

from torch.utils.cpp_extension import load_inline

_CUDA = """
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

// one warp per (n, c) row of H*W values: a strided sum, then a shuffle reduction
__global__ void avg_pool_rows(const float* __restrict__ x, float* __restrict__ out, int rows, int hw) {
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (warp >= rows) return;
    const float* row = x + (long long)warp * hw;
    float s = 0.f;
    for (int i = lane; i < hw; i += 32) s += row[i];
    for (int o = 16; o > 0; o /= 2) s += __shfl_down_sync(0xffffffffu, s, o);
    if (lane == 0) out[warp] = s / hw;
}

torch::Tensor avg_pool(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.scalar_type() == torch::kFloat32, "contiguous fp32 CUDA");
    auto out = torch::empty({x.size(0), x.size(1), 1, 1}, x.options());
    int rows = x.size(0) * x.size(1), hw = x.size(2) * x.size(3);
    int threads = 256, blocks = (rows * 32 + threads - 1) / threads;
    avg_pool_rows<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), out.data_ptr<float>(), rows, hw);
    return out;
}
"""

_ext = load_inline("cudalens_bench_avg_pool", "torch::Tensor avg_pool(torch::Tensor x);", _CUDA,
                   functions=["avg_pool"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, input):
        return _ext.avg_pool(input.contiguous())
'''

SOFTMAX = r'''

from torch.utils.cpp_extension import load_inline

_CUDA = """
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <math_constants.h>

__device__ float block_reduce(float v, float* shared, bool is_max) {
    for (int o = 16; o > 0; o /= 2) {
        float other = __shfl_xor_sync(0xffffffffu, v, o);
        v = is_max ? fmaxf(v, other) : v + other;
    }
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
    __syncthreads();  // the previous reduction's readers are done with `shared`
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    v = lane < warps ? shared[lane] : (is_max ? -CUDART_INF_F : 0.f);
    for (int o = 16; o > 0; o /= 2) {
        float other = __shfl_xor_sync(0xffffffffu, v, o);
        v = is_max ? fmaxf(v, other) : v + other;
    }
    return v;
}

// one block per row: its maximum, the sum of exponentials, then the normalised values
__global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, int cols) {
    __shared__ float shared[32];
    const float* row = x + (long long)blockIdx.x * cols;
    float* out = y + (long long)blockIdx.x * cols;
    float m = -CUDART_INF_F;
    for (int i = threadIdx.x; i < cols; i += blockDim.x) m = fmaxf(m, row[i]);
    m = block_reduce(m, shared, true);
    float s = 0.f;
    for (int i = threadIdx.x; i < cols; i += blockDim.x) s += __expf(row[i] - m);
    s = block_reduce(s, shared, false);
    float inv = 1.f / s;
    for (int i = threadIdx.x; i < cols; i += blockDim.x) out[i] = __expf(row[i] - m) * inv;
}

torch::Tensor softmax_last(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.scalar_type() == torch::kFloat32, "contiguous fp32 CUDA");
    auto y = torch::empty_like(x);
    int cols = x.size(-1);
    long long rows = x.numel() / cols;
    softmax_rows<<<rows, 256, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), y.data_ptr<float>(), cols);
    return y;
}
"""

_ext = load_inline("cudalens_bench_softmax", "torch::Tensor softmax_last(torch::Tensor x);", _CUDA,
                   functions=["softmax_last"], extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, input):
        return _ext.softmax_last(input.contiguous())
'''

MODELS = {"resnet50": (RESNET, "adaptive_avg_pool2d", AVG_POOL), "transformer": (TRANSFORMER, "softmax", SOFTMAX)}
KEY = "CUDALENS_BENCH_KEY"


def cudalens(*args: str, cwd: Path, timeout: float) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "cudalens", "model", *args]
    print("$ cudalens model " + " ".join(args), flush=True)
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, KEY: "sk-bench-not-a-real-key"})
    print(done.stdout, end="")
    print("".join(f"  | {line}\n" for line in done.stderr.splitlines() if not line.startswith("USDT")), end="")
    return done


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", choices=sorted(MODELS))
    parser.add_argument("--out", help="where the files go (default: a temporary folder)")
    parser.add_argument("--no-compile", action="store_true", help="time eager mode only")
    parser.add_argument("--timeout", type=float, default=500.0)
    args = parser.parse_args()
    source, op, kernel = MODELS[args.model]
    if args.model == "resnet50":
        import importlib.util

        found = importlib.util.find_spec("torchvision") is not None
        print("ResNet-50:", "torchvision.models.resnet50(weights=None)" if found
              else "torchvision is not installed: the plain-torch ResNet-50 written in this script")
    folder = Path(args.out or tempfile.mkdtemp(prefix=f"cudalens-{args.model}-"))
    folder.mkdir(parents=True, exist_ok=True)
    model = folder / f"{args.model}.py"
    model.write_text(source)
    out = folder / "model"
    table = cudalens(str(model), "--problems", "3", "--problem", op, "--out", str(out), cwd=folder,
                     timeout=args.timeout)
    if table.returncode != 0:
        return 1
    problem = next(p for p in sorted(out.glob(f"{op}_*.py")) if not p.name.endswith(".optimized.py"))
    candidate = problem.read_text() + kernel
    with FakeOpenAI([reply(f"Here is the kernel.\n\n```python\n{candidate}```\n")]) as fake:
        done = cudalens(str(model), "--problems", "0", "--problem", op, "--out", str(out), "--optimize", "1",
                        "--rounds", "1", "--base-url", fake.base_url, "--api-key-env", KEY, "--top", "8",
                        *(["--no-compile"] if args.no_compile else []), cwd=folder, timeout=args.timeout)
    print(f"files in {out}")
    return 0 if done.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
