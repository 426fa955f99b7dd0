// The cost behind CL501, CL503, CL601 and CL701, measured: each pair runs the flagged pattern and its fix
// on the same data and prints `name milliseconds` (median of the repetitions). Run by rule_costs.py.
#include <algorithm>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

constexpr int kIters = 256;

__global__ void literal_fp64(float* v, int n) {  // CL501: `0.999` and `0.001` promote every step to FP64
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = v[i];
    for (int k = 0; k < kIters; ++k) x = x * 0.999 + 0.001;
    v[i] = x;
}

__global__ void literal_fp32(float* v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = v[i];
    for (int k = 0; k < kIters; ++k) x = x * 0.999f + 0.001f;
    v[i] = x;
}

__global__ void divide_runtime(int* v, int n, int cols) {  // CL503
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int acc = 0;
    for (int k = 0; k < kIters; ++k) acc += (i + k) / cols + (i + k) % cols;
    v[i] = acc;
}

template <int COLS>
__global__ void divide_constant(int* v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int acc = 0;
    for (int k = 0; k < kIters; ++k) acc += (i + k) / COLS + (i + k) % COLS;
    v[i] = acc;
}

__global__ void atomic_one_address(float* total, const float* in, int n) {  // CL701
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(total, in[i]);
}

__global__ void atomic_per_block(float* total, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    __shared__ float partial[32];
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < blockDim.x / 32 ? partial[threadIdx.x] : 0.0f;
        for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
        if (threadIdx.x == 0) atomicAdd(total, v);
    }
}

__global__ void tiny_step(float* v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] += 1.0f;
}

template <typename F>
static float median_ms(F&& run, int reps = 15) {
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    run();  // warm-up
    cudaDeviceSynchronize();
    std::vector<float> ms;
    for (int r = 0; r < reps; ++r) {
        cudaEventRecord(start);
        run();
        cudaEventRecord(stop);
        cudaEventSynchronize(stop);
        float t = 0;
        cudaEventElapsedTime(&t, start, stop);
        ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return ms[ms.size() / 2];
}

int main() {
    const int n = 1 << 24, block = 256, grid = (n + block - 1) / block;
    float *fv, *total;
    int* iv;
    cudaMalloc(&fv, n * sizeof(float));
    cudaMalloc(&iv, n * sizeof(int));
    cudaMalloc(&total, sizeof(float));
    cudaMemset(fv, 0, n * sizeof(float));
    printf("CL501_fp64_literal %.4f\n", median_ms([&] { literal_fp64<<<grid, block>>>(fv, n); }));
    printf("CL501_fp32_literal %.4f\n", median_ms([&] { literal_fp32<<<grid, block>>>(fv, n); }));
    printf("CL503_runtime_divisor %.4f\n", median_ms([&] { divide_runtime<<<grid, block>>>(iv, n, 48); }));
    printf("CL503_constant_divisor %.4f\n", median_ms([&] { divide_constant<48><<<grid, block>>>(iv, n); }));
    printf("CL701_atomic_one_address %.4f\n", median_ms([&] { atomic_one_address<<<grid, block>>>(total, fv, n); }));
    printf("CL701_atomic_per_block %.4f\n", median_ms([&] { atomic_per_block<<<grid, block>>>(total, fv, n); }));
    const int steps = 200, small = 1 << 12;
    printf("CL601_sync_every_step %.4f\n", median_ms([&] {
        for (int s = 0; s < steps; ++s) { tiny_step<<<small / block, block>>>(fv, small); cudaDeviceSynchronize(); }
    }, 5));
    printf("CL601_sync_once %.4f\n", median_ms([&] {
        for (int s = 0; s < steps; ++s) tiny_step<<<small / block, block>>>(fv, small);
        cudaDeviceSynchronize();
    }, 5));
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) { printf("error %s\n", cudaGetErrorString(err)); return 1; }
    cudaFree(fv);
    cudaFree(iv);
    cudaFree(total);
    return 0;
}
