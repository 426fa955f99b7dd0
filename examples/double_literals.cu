// A float kernel that silently computes in double: `1.0` and `0.5` are double literals, so the products
// and sums are promoted to fp64, and `sqrt`/`exp` on a float expression call the double overloads. On
// GPUs with few fp64 units (most non-datacenter parts) this is many times slower.
// Expect: CL5xx on `1.0`, `0.5` (fix: `1.0f`, `0.5f`) and on `sqrt(`/`exp(` (fix: `sqrtf`, `expf`).
#include <cuda_runtime.h>
#include <math.h>

__global__ void gelu_tanh(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float x = in[i];
        float inner = sqrt(2.0f / 3.14159265f) * (x + 0.044715f * x * x * x);
        float t = (exp(2.0f * inner) - 1.0f) / (exp(2.0f * inner) + 1.0f);
        out[i] = 0.5 * x * (1.0 + t);
    }
}

void gelu(const float* in, float* out, int n) {
    gelu_tanh<<<(n + 255) / 256, 256>>>(in, out, n);
}
