// Matrix transpose three ways: naive (coalesced read, store strided by the height), tiled through a
// padded [32][33] shared tile (both global sides coalesced, no bank conflicts) and through an unpadded
// [32][32] tile (column reads of the tile are 32-way bank conflicts).
#include "harness.cuh"

#define TILE 32
#define ROWS 8

__global__ void transpose_naive(const float* in, float* out, int width, int height) {
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS) {
        float v = in[(y + j) * width + x];
        out[x * height + (y + j)] = v;  // expect: uncoalesced
    }
}

__global__ void transpose_padded(const float* in, float* out, int width, int height) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS) {
        tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    }
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS) {
        out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
    }
}

__global__ void transpose_unpadded(const float* in, float* out, int width, int height) {
    __shared__ float tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS) {
        tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    }
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS) {
        out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];  // expect: bank_conflict
    }
}

int main() {
    const int width = 1024, height = 1024;
    float* in = device_floats(size_t(width) * height);
    float* out = device_zeros<float>(size_t(width) * height);
    dim3 block(TILE, ROWS), grid(width / TILE, height / TILE);
    transpose_naive<<<grid, block>>>(in, out, width, height);
    finish("transpose_naive");
    transpose_padded<<<grid, block>>>(in, out, width, height);
    finish("transpose_padded");
    transpose_unpadded<<<grid, block>>>(in, out, width, height);
    finish("transpose_unpadded");
    return 0;
}
