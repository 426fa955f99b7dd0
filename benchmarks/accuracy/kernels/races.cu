// More barrier and race cases: the classic unsynchronised last-warp reduction, a transposed tile read with
// no barrier, a loop whose barrier some warps leave early, and their correct twins.
#include "harness.cuh"

__global__ void warp_reduce_unsynced(const float* in, float* out) {
    __shared__ float s[256];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * 256 + t];
    __syncthreads();
    for (int k = 128; k > 32; k >>= 1) {
        if (t < k) s[t] += s[t + k];
        __syncthreads();
    }
    if (t < 32) {
        s[t] += s[t + 32];  // expect: race
        s[t] += s[t + 16];  // expect: race
        s[t] += s[t + 8];  // expect: race
    }
    if (t == 0) out[blockIdx.x] = s[0];
}

__global__ void warp_reduce_shuffled(const float* in, float* out) {
    __shared__ float s[256];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * 256 + t];
    __syncthreads();
    for (int k = 128; k > 32; k >>= 1) {
        if (t < k) s[t] += s[t + k];
        __syncthreads();
    }
    if (t < 32) {
        float v = s[t] + s[t + 32];
        for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
        if (t == 0) out[blockIdx.x] = v;
    }
}

__global__ void tile_transpose_unsynced(const float* in, float* out) {
    __shared__ float tile[32][33];
    int x = threadIdx.x, y = threadIdx.y;
    int base = blockIdx.x * 1024;
    tile[y][x] = in[base + y * 32 + x];  // expect: race
    out[base + y * 32 + x] = tile[x][y];  // expect: race
}

__global__ void tile_transpose_synced(const float* in, float* out) {
    __shared__ float tile[32][33];
    int x = threadIdx.x, y = threadIdx.y;
    int base = blockIdx.x * 1024;
    tile[y][x] = in[base + y * 32 + x];
    __syncthreads();
    out[base + y * 32 + x] = tile[x][y];
}

__global__ void sync_in_uneven_loop(const float* in, float* out) {
    __shared__ float s[256];
    int t = threadIdx.x;
    float v = in[blockIdx.x * 256 + t];
    for (int r = 0; r < (t >> 5) + 1; ++r) {
        s[t] = v;
        __syncthreads();  // expect: sync
        v += s[(t + 32) % 256];
        __syncthreads();  // expect: sync
    }
    __syncthreads();  // expect: sync
    out[blockIdx.x * 256 + t] = v;
}

__global__ void sync_in_even_loop(const float* in, float* out, int rounds) {
    __shared__ float s[256];
    int t = threadIdx.x;
    float v = in[blockIdx.x * 256 + t];
    for (int r = 0; r < rounds; ++r) {
        s[t] = v;
        __syncthreads();
        v += s[(t + 32) % 256];
        __syncthreads();
    }
    out[blockIdx.x * 256 + t] = v;
}

int main() {
    const int blocks = 64;
    float* in = device_floats(size_t(blocks) * 1024);
    float* out = device_zeros<float>(size_t(blocks) * 1024);
    warp_reduce_unsynced<<<blocks, 256>>>(in, out);
    finish("warp_reduce_unsynced");
    warp_reduce_shuffled<<<blocks, 256>>>(in, out);
    finish("warp_reduce_shuffled");
    tile_transpose_unsynced<<<blocks, dim3(32, 32)>>>(in, out);
    finish("tile_transpose_unsynced");
    tile_transpose_synced<<<blocks, dim3(32, 32)>>>(in, out);
    finish("tile_transpose_synced");
    sync_in_uneven_loop<<<blocks, 256>>>(in, out);
    finish("sync_in_uneven_loop");
    sync_in_even_loop<<<blocks, 256>>>(in, out, 4);
    finish("sync_in_even_loop");
    return 0;
}
