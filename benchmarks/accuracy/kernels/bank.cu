// Shared-memory access patterns: [32][32] column reads (32-way), padded [32][33] (none), stride 2 (2-way),
// broadcast (none), 8-byte float2/double and 16-byte float4 accesses by consecutive lanes (split into
// phases, no conflict) and doubles with a stride of 2 (2-way).
#include "harness.cuh"

__global__ void smem_column_32way(const float* in, float* out) {
    __shared__ float tile[32][32];
    int tx = threadIdx.x, ty = threadIdx.y;
    int base = blockIdx.x * 1024;
    float v = in[base + ty * 32 + tx];
    tile[ty][tx] = v;
    __syncthreads();
    float w = tile[tx][ty];  // expect: bank_conflict
    out[base + ty * 32 + tx] = w;
}

__global__ void smem_column_padded(const float* in, float* out) {
    __shared__ float tile[32][33];
    int tx = threadIdx.x, ty = threadIdx.y;
    int base = blockIdx.x * 1024;
    float v = in[base + ty * 32 + tx];
    tile[ty][tx] = v;
    __syncthreads();
    float w = tile[tx][ty];
    out[base + ty * 32 + tx] = w;
}

__global__ void smem_stride2(const float* in, float* out) {
    __shared__ float buf[512];
    int t = threadIdx.x;
    float v = in[blockIdx.x * 256 + t];
    buf[2 * t] = v;  // expect: bank_conflict
    buf[2 * t + 1] = v + 1.0f;  // expect: bank_conflict
    __syncthreads();
    float w = buf[2 * t] + buf[2 * t + 1];  // expect: bank_conflict
    out[blockIdx.x * 256 + t] = w;
}

__global__ void smem_broadcast(const float* in, float* out) {
    __shared__ float buf[256];
    int t = threadIdx.x;
    float v = in[blockIdx.x * 256 + t];
    buf[t] = v;
    __syncthreads();
    float w = buf[t / 32] + buf[0];
    out[blockIdx.x * 256 + t] = w;
}

__global__ void smem_float2(const float2* in, float2* out) {
    __shared__ float2 buf[256];
    int t = threadIdx.x;
    float2 v = in[blockIdx.x * 256 + t];
    buf[t] = v;
    __syncthreads();
    float2 w = buf[255 - t];
    out[blockIdx.x * 256 + t] = w;
}

__global__ void smem_double(const double* in, double* out) {
    __shared__ double buf[256];
    int t = threadIdx.x;
    double v = in[blockIdx.x * 256 + t];
    buf[t] = v;
    __syncthreads();
    double w = buf[255 - t];
    out[blockIdx.x * 256 + t] = w;
}

__global__ void smem_float4(const float4* in, float4* out) {
    __shared__ float4 buf[256];
    int t = threadIdx.x;
    float4 v = in[blockIdx.x * 256 + t];
    buf[t] = v;
    __syncthreads();
    float4 w = buf[255 - t];
    out[blockIdx.x * 256 + t] = w;
}

__global__ void smem_double_stride2(const double* in, double* out) {
    __shared__ double buf[512];
    int t = threadIdx.x;
    double v = in[blockIdx.x * 256 + t];
    buf[2 * t] = v;  // expect: bank_conflict
    __syncthreads();
    double w = buf[2 * t];  // expect: bank_conflict
    out[blockIdx.x * 256 + t] = w;
}

int main() {
    const int blocks = 1024;
    float* in = device_floats(size_t(blocks) * 1024);
    float* out = device_zeros<float>(size_t(blocks) * 1024);
    double* din = device_doubles(size_t(blocks) * 256);
    double* dout = device_zeros<double>(size_t(blocks) * 256);
    smem_column_32way<<<blocks, dim3(32, 32)>>>(in, out);
    finish("smem_column_32way");
    smem_column_padded<<<blocks, dim3(32, 32)>>>(in, out);
    finish("smem_column_padded");
    smem_stride2<<<blocks, 256>>>(in, out);
    finish("smem_stride2");
    smem_broadcast<<<blocks, 256>>>(in, out);
    finish("smem_broadcast");
    smem_float2<<<blocks, 256>>>(reinterpret_cast<float2*>(in), reinterpret_cast<float2*>(out));
    finish("smem_float2");
    smem_double<<<blocks, 256>>>(din, dout);
    finish("smem_double");
    smem_float4<<<blocks, 256>>>(reinterpret_cast<float4*>(in), reinterpret_cast<float4*>(out));
    finish("smem_float4");
    smem_double_stride2<<<blocks, 256>>>(din, dout);
    finish("smem_double_stride2");
    return 0;
}
