// 2-D thread blocks: with blockDim.x = 16 or 8 a warp spans 2 or 4 rows (threadIdx.y varies inside the warp).
// Expected: row-major indexing by x stays coalesced (whole 32-byte sectors per row); indexing with
// threadIdx.x on the slow dimension is strided by the row pitch.
#include "harness.cuh"

__global__ void scale_rows_16x16(const float* in, float* out, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        float v = in[y * width + x];
        out[y * width + x] = v * 3.0f;
    }
}

__global__ void scale_rows_8x32(const float* in, float* out, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        float v = in[y * width + x];
        out[y * width + x] = v * 3.0f;
    }
}

__global__ void scale_swapped_32x8(const float* in, float* out, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < height && y < width) {
        float v = in[x * width + y];  // expect: uncoalesced
        out[x * width + y] = v * 3.0f;  // expect: uncoalesced
    }
}

int main() {
    const int width = 1024, height = 1024;
    float* in = device_floats(size_t(width) * height);
    float* out = device_zeros<float>(size_t(width) * height);
    dim3 b16(16, 16), g16(width / 16, height / 16);
    scale_rows_16x16<<<g16, b16>>>(in, out, width, height);
    finish("scale_rows_16x16");
    dim3 b8(8, 32), g8(width / 8, height / 32);
    scale_rows_8x32<<<g8, b8>>>(in, out, width, height);
    finish("scale_rows_8x32");
    dim3 b32(32, 8), g32(height / 32, width / 8);
    scale_swapped_32x8<<<g32, b32>>>(in, out, width, height);
    finish("scale_swapped_32x8");
    return 0;
}
