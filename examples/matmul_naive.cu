// Naive matrix multiply C = A * B with one thread per output element. Columns on threadIdx.x keep the
// reads of B and the write of C coalesced and make A's read a broadcast, but every operand comes from
// global memory n times: the kernel is bound by memory traffic, not by arithmetic.
// Expect: no coalescing finding; the Judge (on the GPU) calls it memory-bound and points to tiling
// (see matmul_tiled.cu).
#include <cuda_runtime.h>

__global__ void matmul_naive(const float* A, const float* B, float* C, int n) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < n && col < n) {
        float acc = 0.0f;
        for (int k = 0; k < n; ++k) {
            acc += A[row * n + k] * B[k * n + col];
        }
        C[row * n + col] = acc;
    }
}

void matmul(const float* A, const float* B, float* C, int n) {
    dim3 block(16, 16);
    dim3 grid((n + 15) / 16, (n + 15) / 16);
    matmul_naive<<<grid, block>>>(A, B, C, n);
}
