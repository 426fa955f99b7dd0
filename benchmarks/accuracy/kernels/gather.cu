// Gathers through an index array: random indices (scattered sectors) and identity indices (coalesced at
// run time, unknowable statically). Expected: the random gather is uncoalesced; a static tool can only say
// "depends on the data" for both.
#include "harness.cuh"

__global__ void gather_random(const float* in, const int* idx, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int j = idx[i];
        float v = in[j];  // expect: uncoalesced
        out[i] = v;
    }
}

__global__ void gather_identity(const float* in, const int* idx, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int j = idx[i];
        float v = in[j];
        out[i] = v;
    }
}

int main() {
    const int n = 1 << 18;
    float* in = device_floats(n);
    float* out = device_zeros<float>(n);
    int* random_idx = device_indices(n, n, false);
    int* identity_idx = device_indices(n, n, true);
    gather_random<<<n / 256, 256>>>(in, random_idx, out, n);
    finish("gather_random");
    gather_identity<<<n / 256, 256>>>(in, identity_idx, out, n);
    finish("gather_identity");
    return 0;
}
