// Array-of-structs field reads (12- and 16-byte records) against struct-of-arrays and float4 loads.
// Expected: AoS field reads waste 3x/4x sectors; SoA and float4 (16 bytes per lane, contiguous) do not.
#include "harness.cuh"

struct Point3 {
    float x, y, z;
};

struct Particle {
    float x, y, z, mass;
};

__global__ void aos3_read_x(const Point3* pts, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float x = pts[i].x;  // expect: uncoalesced
        out[i] = x * 2.0f;
    }
}

__global__ void aos4_read_mass(const Particle* ps, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float m = ps[i].mass;  // expect: uncoalesced
        out[i] = m * 0.5f;
    }
}

__global__ void soa_read_x(const float* xs, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float x = xs[i];
        out[i] = x * 2.0f;
    }
}

__global__ void float4_scale(const float4* in, float4* out, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 v = in[i];
        v.x *= 2.0f;
        v.y *= 2.0f;
        v.z *= 2.0f;
        v.w *= 2.0f;
        out[i] = v;
    }
}

int main() {
    const int n = 1 << 18;
    float* raw = device_floats(size_t(n) * 4);
    float* out = device_zeros<float>(size_t(n) * 4);
    aos3_read_x<<<n / 256, 256>>>(reinterpret_cast<Point3*>(raw), out, n);
    finish("aos3_read_x");
    aos4_read_mass<<<n / 256, 256>>>(reinterpret_cast<Particle*>(raw), out, n);
    finish("aos4_read_mass");
    soa_read_x<<<n / 256, 256>>>(raw, out, n);
    finish("soa_read_x");
    float4_scale<<<n / 256, 256>>>(reinterpret_cast<float4*>(raw), reinterpret_cast<float4*>(out), n);
    finish("float4_scale");
    return 0;
}
