// Block reductions: interleaved addressing with tid % (2*s) (divergent, and strided shared accesses),
// sequential addressing down to one lane, sequential addressing down to a warp then shuffles, and a
// warp-shuffle reduction.
#include "harness.cuh"

__global__ void reduce_interleaved(const float* in, float* out) {
    __shared__ float sdata[256];
    unsigned tid = threadIdx.x;
    sdata[tid] = in[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    for (unsigned s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0) {  // expect: divergence
            sdata[tid] += sdata[tid + s];  // expect: divergence, bank_conflict
        }
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

__global__ void reduce_sequential(const float* in, float* out) {
    __shared__ float sdata[256];
    unsigned tid = threadIdx.x;
    sdata[tid] = in[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

__global__ void reduce_sequential_warp_tail(const float* in, float* out) {
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

__global__ void reduce_shuffle(const float* in, float* out, int n) {
    __shared__ float warp_sums[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % 32;
    int warp = threadIdx.x / 32;
    float v = i < n ? in[i] : 0.0f;
    for (int offset = 16; offset > 0; offset >>= 1) {
        v += __shfl_down_sync(0xffffffffu, v, offset);
    }
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < blockDim.x / 32 ? warp_sums[lane] : 0.0f;
        for (int offset = 16; offset > 0; offset >>= 1) {
            v += __shfl_down_sync(0xffffffffu, v, offset);
        }
        if (lane == 0) out[blockIdx.x] = v;
    }
}

int main() {
    const int n = 1 << 18;
    float* in = device_floats(n);
    float* out = device_zeros<float>(n / 256);
    reduce_interleaved<<<n / 256, 256>>>(in, out);
    finish("reduce_interleaved");
    reduce_sequential<<<n / 256, 256>>>(in, out);
    finish("reduce_sequential");
    reduce_sequential_warp_tail<<<n / 256, 256>>>(in, out);
    finish("reduce_sequential_warp_tail");
    reduce_shuffle<<<n / 256, 256>>>(in, out, n);
    finish("reduce_shuffle");
    return 0;
}
