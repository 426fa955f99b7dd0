// Global atomics: every thread adds into one address (serialised in L2) against one atomic per block
// after a shared-memory reduction.
#include "harness.cuh"

__global__ void sum_one_address(const float* in, float* total, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(total, in[i]);
    }
}

__global__ void sum_per_block(const float* in, float* total, int n) {
    __shared__ float partial[256];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    partial[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) {
            partial[t] += partial[t + s];
        }
        __syncthreads();
    }
    if (t == 0) {
        atomicAdd(total, partial[0]);
    }
}

int main() {
    const int n = 1 << 18;
    float* in = device_floats(n);
    float* total = device_zeros<float>(1);
    sum_one_address<<<n / 256, 256>>>(in, total, n);
    finish("sum_one_address");
    sum_per_block<<<n / 256, 256>>>(in, total, n);
    finish("sum_per_block");
    return 0;
}
