// A float kernel that silently computes in double: `1.0` and `0.5` are double literals, so the products
// and sums are promoted to fp64. On GPUs with few fp64 units (most non-datacenter parts) this is many times
// slower. `sqrt`/`exp` on a float expression are fine: in CUDA C++ they resolve to the float overloads (the
// PTX has no .f64 instruction for them).
// Expect: CL501 on `0.5` and `1.0` (fix: `0.5f`, `1.0f`).
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
