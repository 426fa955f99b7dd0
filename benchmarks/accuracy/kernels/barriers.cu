// Barriers: __syncthreads() under a branch that splits a warp and one that splits the block, a shared
// write read by another thread with no barrier (read-after-write race), a loop that overwrites the buffer
// before the others finished reading it (write-after-read race), and the correct version with barriers.
#include "harness.cuh"

__global__ void sync_in_lane_branch(const float* in, float* out) {
    __shared__ float buf[256];
    int t = threadIdx.x;
    buf[t] = in[blockIdx.x * 256 + t];
    if (t < 48) {
        __syncthreads();  // expect: sync
        out[blockIdx.x * 256 + t] = buf[(t + 1) % 48];
    }
}

__global__ void sync_in_block_branch(const float* in, float* out) {
    __shared__ float buf[256];
    int t = threadIdx.x;
    buf[t] = in[blockIdx.x * 256 + t];
    if (t < 128) {
        __syncthreads();  // expect: sync
        out[blockIdx.x * 256 + t] = buf[t + 1];
    }
}

__global__ void sync_skipped_then_waiting(const float* in, float* out) {
    __shared__ float buf[256];
    int t = threadIdx.x;
    buf[t] = in[blockIdx.x * 256 + t];
    if (t < 128) {
        __syncthreads();  // expect: sync
    }
    __syncthreads();
    out[blockIdx.x * 256 + t] = buf[255 - t];
}

__global__ void missing_barrier_raw(const float* in, float* out) {
    __shared__ float buf[256];
    int t = threadIdx.x;
    buf[t] = in[blockIdx.x * 256 + t];  // expect: race
    float v = buf[(t + 64) % 256];  // expect: race
    out[blockIdx.x * 256 + t] = v;
}

__global__ void missing_barrier_war(const float* in, float* out, int steps) {
    __shared__ float buf[256];
    int t = threadIdx.x;
    float v = in[blockIdx.x * 256 + t];
    for (int s = 0; s < steps; ++s) {
        buf[t] = v;  // expect: race
        __syncthreads();
        v = 0.5f * (v + buf[(t + 32) % 256]);  // expect: race
    }
    out[blockIdx.x * 256 + t] = v;
}

__global__ void barriers_correct(const float* in, float* out, int steps) {
    __shared__ float buf[256];
    int t = threadIdx.x;
    float v = in[blockIdx.x * 256 + t];
    for (int s = 0; s < steps; ++s) {
        buf[t] = v;
        __syncthreads();
        v = 0.5f * (v + buf[(t + 32) % 256]);
        __syncthreads();
    }
    out[blockIdx.x * 256 + t] = v;
}

int main() {
    const int blocks = 64;
    float* in = device_floats(size_t(blocks) * 256);
    float* out = device_zeros<float>(size_t(blocks) * 256);
    sync_in_lane_branch<<<blocks, 256>>>(in, out);
    finish("sync_in_lane_branch");
    sync_in_block_branch<<<blocks, 256>>>(in, out);
    finish("sync_in_block_branch");
    sync_skipped_then_waiting<<<blocks, 256>>>(in, out);
    finish("sync_skipped_then_waiting");
    missing_barrier_raw<<<blocks, 256>>>(in, out);
    finish("missing_barrier_raw");
    missing_barrier_war<<<blocks, 256>>>(in, out, 4);
    finish("missing_barrier_war");
    barriers_correct<<<blocks, 256>>>(in, out, 4);
    finish("barriers_correct");
    return 0;
}
