// Tiled transpose with an unpadded [32][32] tile: global accesses are coalesced, but reading the tile by
// column (`tile[threadIdx.x][...]`) puts all 32 lanes of a warp in the same bank: a 32-way conflict.
// Expect: CL301 bank conflict (32-way) on the `tile[threadIdx.x][threadIdx.y + j]` read, with the fix
// "pad the row: [TILE][TILE + 1]".
#include <cuda_runtime.h>

#define TILE 32
#define ROWS 8

__global__ void transpose_tiled_conflicts(const float* in, float* out, int width, int height) {
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
        out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
    }
}

void transpose(const float* in, float* out, int width, int height) {
    dim3 block(TILE, ROWS);
    dim3 grid(width / TILE, height / TILE);
    transpose_tiled_conflicts<<<grid, block>>>(in, out, width, height);
}
