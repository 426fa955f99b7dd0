// Block sum with sequential addressing: the active threads are the first s, so whole warps retire
// together while s >= 32, and `sdata[tid + s]` is read by consecutive lanes (no bank conflicts). The last
// warp finishes with shuffles instead of idling lanes.
// Expect: no findings.
#include <cuda_runtime.h>

__global__ void reduce_sequential(const float* in, float* out) {
    __shared__ float sdata[256];
    unsigned tid = threadIdx.x;
    sdata[tid] = in[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s >= 32; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid < 32) {
        float v = sdata[tid];
        for (int offset = 16; offset > 0; offset >>= 1) {
            v += __shfl_down_sync(0xffffffffu, v, offset);
        }
        if (tid == 0) out[blockIdx.x] = v;
    }
}

void block_sums(const float* in, float* out, int n) {
    reduce_sequential<<<n / 256, 256>>>(in, out);
}
