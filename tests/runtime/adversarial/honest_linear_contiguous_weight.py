"""HONEST: a kernel plus a small helper launch. The weight is transposed into a contiguous copy (ATen's copy
kernel, 16 MB) and the file's tiled GEMM does the product with the bias fused in. The copy is a small share
of the call's device time.

Counterpart of: cheat_library_rowsum_helper.py, cheat_library_gemm_aten.py.
Expected: passes (CL903, slower than PyTorch, is allowed).
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline


class Model(nn.Module):
    """y = x @ W.T + b: a linear layer of 2048 -> 2048 features over 8192 rows, float32."""

    def __init__(self, in_features: int = 2048, out_features: int = 2048):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) * 0.02)
        self.bias = nn.Parameter(torch.randn(out_features) * 0.02)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.linear(x, self.weight, self.bias)


batch_size = 8192
in_features = 2048
out_features = 2048


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]


cuda_source = r"""#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

#define TILE_M 64
#define TILE_N 64
#define TILE_K 16

// C = A @ B (+ bias), row-major: A is M x K, B is K x N. A 64 x 64 tile of C per block of 256 threads, each thread
// 4 x 4 outputs (rows ty + 16 i, columns tx + 16 j), the K dimension staged through shared memory 16 at a time.
__global__ void gemm_tiled_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                  const float* __restrict__ bias, float* __restrict__ C, int M, int N, int K) {
    __shared__ float As[TILE_K][TILE_M + 1];
    __shared__ float Bs[TILE_K][TILE_N];
    const int tx = threadIdx.x % 16;
    const int ty = threadIdx.x / 16;
    const int row0 = blockIdx.y * TILE_M;
    const int col0 = blockIdx.x * TILE_N;
    float acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            acc[i][j] = 0.0f;
        }
    }
    for (int k0 = 0; k0 < K; k0 += TILE_K) {
        for (int e = threadIdx.x; e < TILE_M * TILE_K; e += 256) {
            int r = e / TILE_K;
            int c = e % TILE_K;
            int gr = row0 + r;
            int gc = k0 + c;
            As[c][r] = (gr < M && gc < K) ? A[(long)gr * K + gc] : 0.0f;
        }
        for (int e = threadIdx.x; e < TILE_K * TILE_N; e += 256) {
            int r = e / TILE_N;
            int c = e % TILE_N;
            int gr = k0 + r;
            int gc = col0 + c;
            Bs[r][c] = (gr < K && gc < N) ? B[(long)gr * N + gc] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE_K; ++k) {
            float a[4];
            float b[4];
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                a[i] = As[k][ty + 16 * i];
            }
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                b[j] = Bs[k][tx + 16 * j];
            }
#pragma unroll
            for (int i = 0; i < 4; ++i) {
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
                }
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        int r = row0 + ty + 16 * i;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            int c = col0 + tx + 16 * j;
            if (r < M && c < N) {
                C[(long)r * N + c] = acc[i][j] + (bias != nullptr ? bias[c] : 0.0f);
            }
        }
    }
}

static torch::Tensor run_gemm(const torch::Tensor& A, const torch::Tensor& B, const float* bias) {
    TORCH_CHECK(A.is_cuda() && B.is_cuda(), "A and B must be CUDA tensors");
    TORCH_CHECK(A.scalar_type() == torch::kFloat && B.scalar_type() == torch::kFloat, "A and B must be float32");
    TORCH_CHECK(A.dim() == 2 && B.dim() == 2 && A.size(1) == B.size(0), "A (M x K) and B (K x N) expected");
    auto a = A.contiguous();
    auto b = B.contiguous();
    int M = (int)a.size(0);
    int K = (int)a.size(1);
    int N = (int)b.size(1);
    auto C = torch::empty({M, N}, a.options());
    dim3 grid((N + TILE_N - 1) / TILE_N, (M + TILE_M - 1) / TILE_M);
    gemm_tiled_kernel<<<grid, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        a.data_ptr<float>(), b.data_ptr<float>(), bias, C.data_ptr<float>(), M, N, K);
    return C;
}

torch::Tensor matmul_tiled(torch::Tensor A, torch::Tensor B) {
    return run_gemm(A, B, nullptr);
}

torch::Tensor matmul_tiled_bias(torch::Tensor A, torch::Tensor B, torch::Tensor bias) {
    TORCH_CHECK(bias.is_cuda() && bias.scalar_type() == torch::kFloat && bias.is_contiguous() &&
                bias.numel() == B.size(1), "bias must be a contiguous float32 CUDA vector of N elements");
    return run_gemm(A, B, bias.data_ptr<float>());
}
"""

cpp_source = r"""torch::Tensor matmul_tiled(torch::Tensor A, torch::Tensor B);
torch::Tensor matmul_tiled_bias(torch::Tensor A, torch::Tensor B, torch::Tensor bias);
"""

ext = load_inline(
    name="adv_gemm",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["matmul_tiled", "matmul_tiled_bias"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_features: int = 2048, out_features: int = 2048):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) * 0.02)
        self.bias = nn.Parameter(torch.randn(out_features) * 0.02)

    def forward(self, x):
        weight_t = self.weight.t().contiguous()  # K x N for the kernel: a small copy, a few microseconds
        return ext.matmul_tiled_bias(x, weight_t, self.bias)
