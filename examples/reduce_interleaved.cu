// Block sum with interleaved addressing (the first kernel of NVIDIA's "Optimizing Parallel Reduction"):
// `tid % (2 * s) == 0` keeps every other lane, then every fourth..., so each warp runs the body with most
// lanes idle, and `sdata[tid + s]` with tid a multiple of 2s strides across shared-memory banks.
// Expect: CL2xx divergent branch on the `if (tid % (2 * s) == 0)` line; CL301 on the strided shared access.
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
