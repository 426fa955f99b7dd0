// Matrix multiply C = A * B (square, row-major): naive with columns on threadIdx.x (coalesced B and C,
// A broadcast), naive with rows on threadIdx.x (A and C strided by the matrix width), and 16x16 tiles
// through shared memory.
#include "harness.cuh"

#define TS 16

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

__global__ void matmul_naive_rows_on_x(const float* A, const float* B, float* C, int n) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < n && col < n) {
        float acc = 0.0f;
        for (int k = 0; k < n; ++k) {
            acc += A[row * n + k] * B[k * n + col];  // expect: uncoalesced
        }
        C[row * n + col] = acc;  // expect: uncoalesced
    }
}

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

int main() {
    const int n = 512;
    float* A = device_floats(size_t(n) * n, 11);
    float* B = device_floats(size_t(n) * n, 12);
    float* C = device_zeros<float>(size_t(n) * n);
    dim3 block(TS, TS), grid(n / TS, n / TS);
    matmul_naive<<<grid, block>>>(A, B, C, n);
    finish("matmul_naive");
    matmul_naive_rows_on_x<<<grid, block>>>(A, B, C, n);
    finish("matmul_naive_rows_on_x");
    matmul_tiled<<<grid, block>>>(A, B, C, n);
    finish("matmul_tiled");
    return 0;
}
