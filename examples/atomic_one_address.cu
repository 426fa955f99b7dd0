// Every thread adds its element into the same global address: the atomics serialise in one L2 slice, so
// the kernel runs at the speed of one memory location no matter how many SMs the GPU has.
// Expect: CL7xx on `atomicAdd(total, ...)`; the better shape reduces within the block first (see
// reduce_warp_shuffle.cu) and issues one atomic per block.
#include <cuda_runtime.h>

__global__ void sum_all(const float* in, float* total, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(total, in[i]);
    }
}

void sum(const float* in, float* total, int n) {
    cudaMemset(total, 0, sizeof(float));
    sum_all<<<(n + 255) / 256, 256>>>(in, total, n);
}
