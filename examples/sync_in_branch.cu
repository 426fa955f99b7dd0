// A barrier inside a thread-dependent branch: only threads with tid < count reach __syncthreads(). When
// count is not a multiple of the block size, part of the block never arrives — undefined behaviour that
// hangs or silently corrupts on some GPUs (compute-sanitizer --tool synccheck reports it).
// Expect: CL302 on the `__syncthreads()` line, pointing at the `if (threadIdx.x < count)` condition.
#include <cuda_runtime.h>

__global__ void smooth_prefix(float* data, int count) {
    __shared__ float buf[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x < count) {
        buf[threadIdx.x] = data[i];
        __syncthreads();
        float left = threadIdx.x > 0 ? buf[threadIdx.x - 1] : 0.0f;
        data[i] = 0.5f * (buf[threadIdx.x] + left);
    }
}

void smooth(float* data, int n, int count) {
    smooth_prefix<<<n / 256, 256>>>(data, count);
}
