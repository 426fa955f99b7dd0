// What the CL402/CL404 messages claim, asked of a real GPU: each case launches once and prints
// `case error-name`. Built and run by tests/analysis/test_launch_limits_gpu.py.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void plain(float* out) { out[threadIdx.x] = 1.0f; }
__global__ void __launch_bounds__(96) bounded(float* out) { out[threadIdx.x] = 1.0f; }
__global__ void dynamic_shared(float* out) {
    extern __shared__ float buf[];
    buf[threadIdx.x] = 1.0f;
    __syncthreads();
    out[threadIdx.x] = buf[threadIdx.x];
}
__global__ void dynamic_shared_opted(float* out) {
    extern __shared__ float buf[];
    buf[threadIdx.x] = 1.0f;
    __syncthreads();
    out[threadIdx.x] = buf[threadIdx.x];
}

static void report(const char* name) {
    cudaError_t launch = cudaGetLastError();
    cudaError_t sync = cudaDeviceSynchronize();
    printf("%s %s\n", name, cudaGetErrorName(launch != cudaSuccess ? launch : sync));
}

int main() {
    float* out = nullptr;
    cudaMalloc(&out, 4096 * sizeof(float));
    plain<<<1, 100>>>(out);
    report("block_100");
    plain<<<1, 2048>>>(out);
    report("block_2048");
    plain<<<1, dim3(1, 1, 128)>>>(out);
    report("block_z_128");
    bounded<<<1, 96>>>(out);
    report("bounds_96_of_96");
    bounded<<<1, 128>>>(out);
    report("bounds_128_of_96");
    dynamic_shared<<<1, 256, 32 * 1024>>>(out);
    report("dynamic_32k");
    dynamic_shared<<<1, 256, 64 * 1024>>>(out);
    report("dynamic_64k_no_opt_in");
    cudaFuncSetAttribute(dynamic_shared_opted, cudaFuncAttributeMaxDynamicSharedMemorySize, 96 * 1024);
    dynamic_shared_opted<<<1, 256, 96 * 1024>>>(out);
    report("dynamic_96k_opted_in");
    dynamic_shared_opted<<<1, 256, 300 * 1024>>>(out);
    report("dynamic_300k");
    cudaFree(out);
    return 0;
}
