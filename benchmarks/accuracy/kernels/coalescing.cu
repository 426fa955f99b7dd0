// Global loads and stores with lane strides of 1, 2, 4, 32 elements and a runtime stride.
// Expected: stride 1 coalesced; strides 2/4/32 need 2x/4x/8x the ideal sectors; runtime stride unknown statically.
#include "harness.cuh"

__global__ void copy_coalesced(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = in[i];
        out[i] = v;
    }
}

__global__ void load_stride2(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = in[2 * i];  // expect: uncoalesced
        out[i] = v;
    }
}

__global__ void load_stride4(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = in[4 * i];  // expect: uncoalesced
        out[i] = v;
    }
}

__global__ void load_stride32(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = in[i * 32];  // expect: uncoalesced
        out[i] = v;
    }
}

__global__ void load_stride_param(const float* in, float* out, int n, int stride) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = in[i * stride];  // expect: uncoalesced
        out[i] = v;
    }
}

__global__ void store_stride2(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = in[i];
        out[2 * i] = v;  // expect: uncoalesced
    }
}

int main() {
    const int n = 1 << 18;
    float* in = device_floats(size_t(n) * 32);
    float* out = device_zeros<float>(size_t(n) * 2);
    copy_coalesced<<<n / 256, 256>>>(in, out, n);
    finish("copy_coalesced");
    load_stride2<<<n / 256, 256>>>(in, out, n);
    finish("load_stride2");
    load_stride4<<<n / 256, 256>>>(in, out, n);
    finish("load_stride4");
    load_stride32<<<n / 256, 256>>>(in, out, n);
    finish("load_stride32");
    load_stride_param<<<n / 256, 256>>>(in, out, n, 8);
    finish("load_stride_param");
    store_stride2<<<n / 256, 256>>>(in, out, n);
    finish("store_stride2");
    return 0;
}
