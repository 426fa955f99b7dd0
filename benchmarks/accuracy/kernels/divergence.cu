// Warp divergence: a heavy body under threadIdx.x % 2 (the two paths differ in shape and trip count, so
// the compiler cannot merge them into one predicated loop), a branch on the warp id (uniform per warp), a bare
// bounds check, a loop whose trip count depends on the lane, a branch on loaded data, and a block of 48
// threads (its second warp is half empty, which is a launch problem rather than a divergent branch).
#include "harness.cuh"

__device__ float polish(float x, int rounds) {
    for (int r = 0; r < rounds; ++r) {
        x = x * 0.999f + 0.001f / (x + 1.0f);
    }
    return x;
}

__global__ void odd_even_heavy(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i];
    if (threadIdx.x % 2 == 0) {  // expect: divergence
        for (int r = 0; r < 64; ++r) {  // expect: divergence
            v = v * 0.999f + 0.001f / (v + 1.0f);  // expect: divergence
        }
    } else {
        for (int r = 0; r < 48; ++r) {  // expect: divergence
            v = sqrtf(v * v + 0.5f) - 0.25f * v;  // expect: divergence
        }
    }
    out[i] = v;
}

__global__ void warp_uniform_branch(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int warp = threadIdx.x / 32;
    float v = in[i];
    if (warp % 2 == 0) {
        for (int r = 0; r < 64; ++r) {
            v = v * 0.999f + 0.001f / (v + 1.0f);
        }
    } else {
        for (int r = 0; r < 48; ++r) {
            v = sqrtf(v * v + 0.5f) - 0.25f * v;
        }
    }
    out[i] = v;
}

__global__ void bounds_checked(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = polish(in[i], 16);
    }
}

__global__ void lane_trip_count(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i];
    int lane = threadIdx.x % 32;
    for (int r = 0; r < lane * 4; ++r) {  // expect: divergence
        v = v * 0.999f + 0.001f / (v + 1.0f);  // expect: divergence
    }
    out[i] = v;
}

__global__ void data_dependent_branch(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i];
    if (v > 1.0f) {  // expect: divergence
        for (int r = 0; r < 32; ++r) {  // expect: divergence
            v = v * 0.999f + 0.001f / (v + 1.0f);  // expect: divergence
        }
    }
    out[i] = v;
}

__global__ void block_of_48(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = polish(in[i], 16);
    }
}

int main() {
    const int n = 1 << 18;
    float* in = device_floats(n);
    float* out = device_zeros<float>(n);
    odd_even_heavy<<<n / 256, 256>>>(in, out, n);
    finish("odd_even_heavy");
    warp_uniform_branch<<<n / 256, 256>>>(in, out, n);
    finish("warp_uniform_branch");
    bounds_checked<<<(n - 100 + 255) / 256, 256>>>(in, out, n - 100);
    finish("bounds_checked");
    lane_trip_count<<<n / 256, 256>>>(in, out, n);
    finish("lane_trip_count");
    data_dependent_branch<<<n / 256, 256>>>(in, out, n);
    finish("data_dependent_branch");
    block_of_48<<<(n + 47) / 48, 48>>>(in, out, n);
    finish("block_of_48");
    return 0;
}
