// Tiled transpose through shared memory with a padded [32][33] tile: both the global read and the global
// write are row-wise (coalesced), and reading the tile by column hits 32 different banks thanks to the
// extra column. This is the version to copy.
// Expect: no findings.
#include <cuda_runtime.h>

#define TILE 32
#define ROWS 8

__global__ void transpose_tiled(const float* in, float* out, int width, int height) {
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

void transpose(const float* in, float* out, int width, int height) {
    dim3 block(TILE, ROWS);
    dim3 grid(width / TILE, height / TILE);
    transpose_tiled<<<grid, block>>>(in, out, width, height);
}
