// Naive matrix transpose: each thread reads one element of a row (coalesced) and writes it down a column,
// so consecutive lanes store `height` floats apart: every store touches 32 different sectors.
// Expect: CL1xx uncoalesced global store on the `out[...] =` line (stride = height elements).
#include <cuda_runtime.h>

#define TILE 32
#define ROWS 8

__global__ void transpose_naive(const float* in, float* out, int width, int height) {
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS) {
        out[x * height + (y + j)] = in[(y + j) * width + x];
    }
}

void transpose(const float* in, float* out, int width, int height) {
    dim3 block(TILE, ROWS);
    dim3 grid(width / TILE, height / TILE);
    transpose_naive<<<grid, block>>>(in, out, width, height);
}
