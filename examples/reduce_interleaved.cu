// Block sum with interleaved addressing (the first kernel of NVIDIA's "Optimizing Parallel Reduction"):
// `tid % (2 * s) == 0` keeps every other lane, then every fourth... The textbook calls this divergence, but
// measured on an H200 (nvcc 13, -O3) the short body is predicated: all 32 lanes stay active and only ~4 do
// useful work, and the even-lane shared accesses hit distinct banks.
// Expect: no static finding (CL201 is for divergent branches around real work); `cudalens profile` shows
// the idle predicated lanes. Compare with reduce_sequential.cu.
#include <cuda_runtime.h>

__global__ void reduce_interleaved(const float* in, float* out) {
    __shared__ float sdata[256];
    unsigned tid = threadIdx.x;
    sdata[tid] = in[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    for (unsigned s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

void block_sums(const float* in, float* out, int n) {
    reduce_interleaved<<<n / 256, 256>>>(in, out);
}
