// Block sum with warp shuffles: each warp reduces in registers with __shfl_down_sync, one lane per warp
// writes its partial to shared memory, and the first warp reduces the partials. Few shared accesses, one
// barrier reached by all threads, and a grid-stride loop that handles any n.
// Expect: no findings.
#include <cuda_runtime.h>

__device__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) {
        v += __shfl_down_sync(0xffffffffu, v, offset);
    }
    return v;
}

__global__ void reduce_shuffle(const float* in, float* out, int n) {
    __shared__ float partial[32];
    int lane = threadIdx.x % 32;
    int warp = threadIdx.x / 32;
    float v = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        v += in[i];
    }
    v = warp_sum(v);
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < blockDim.x / 32 ? partial[lane] : 0.0f;
        v = warp_sum(v);
        if (lane == 0) out[blockIdx.x] = v;
    }
}

void block_sums(const float* in, float* out, int n) {
    reduce_shuffle<<<264, 256>>>(in, out, n);
}
