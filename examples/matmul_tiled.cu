// Tiled matrix multiply: each 16x16 block stages a tile of A and of B in shared memory, so every global
// element is read n/16 times instead of n. Row-wise tile loads are coalesced, `As[ty][k]` is a broadcast
// and `Bs[k][tx]` walks a row: no bank conflicts. Both barriers are reached by every thread.
// Expect: no findings.
#include <cuda_runtime.h>

#define TS 16

__global__ void matmul_tiled(const float* A, const float* B, float* C, int n) {
    __shared__ float As[TS][TS];
    __shared__ float Bs[TS][TS];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TS + ty;
    int col = blockIdx.x * TS + tx;
    float acc = 0.0f;
    for (int t = 0; t < n / TS; ++t) {
        As[ty][tx] = A[row * n + t * TS + tx];
        Bs[ty][tx] = B[(t * TS + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < TS; ++k) {
            acc += As[ty][k] * Bs[k][tx];
        }
        __syncthreads();
    }
    C[row * n + col] = acc;
}

// n must be a multiple of TS.
void matmul(const float* A, const float* B, float* C, int n) {
    dim3 block(TS, TS);
    dim3 grid(n / TS, n / TS);
    matmul_tiled<<<grid, block>>>(A, B, C, n);
}
