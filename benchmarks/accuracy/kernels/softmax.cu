// Row-wise softmax, one block of 256 threads per row: strided column loop (coalesced), block max and sum
// through warp shuffles and a small shared array.
#include "harness.cuh"

__device__ float block_reduce(float v, bool is_max, float* scratch) {
    int lane = threadIdx.x % 32;
    int warp = threadIdx.x / 32;
    for (int offset = 16; offset > 0; offset >>= 1) {
        float other = __shfl_xor_sync(0xffffffffu, v, offset);
        v = is_max ? fmaxf(v, other) : v + other;
    }
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    v = scratch[0];
    for (int w = 1; w < blockDim.x / 32; ++w) {
        v = is_max ? fmaxf(v, scratch[w]) : v + scratch[w];
    }
    __syncthreads();
    return v;
}

__global__ void softmax_rows(const float* in, float* out, int cols) {
    __shared__ float scratch[32];
    const float* row_in = in + size_t(blockIdx.x) * cols;
    float* row_out = out + size_t(blockIdx.x) * cols;
    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        m = fmaxf(m, row_in[c]);
    }
    m = block_reduce(m, true, scratch);
    float sum = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        sum += __expf(row_in[c] - m);
    }
    sum = block_reduce(sum, false, scratch);
    float inv = 1.0f / sum;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        row_out[c] = __expf(row_in[c] - m) * inv;
    }
}

int main() {
    const int rows = 1024, cols = 4096;
    float* in = device_floats(size_t(rows) * cols);
    float* out = device_zeros<float>(size_t(rows) * cols);
    softmax_rows<<<rows, 256>>>(in, out, cols);
    finish("softmax_rows");
    return 0;
}
