// cudalens: reference=bank_conflict_ref.py
#include <torch/extension.h>

#define TILE 32

__global__ void tile_transpose_kernel(const float* in, float* out, int n) {
    __shared__ float tile[TILE][TILE];
    int x = threadIdx.x, y = threadIdx.y;
    int base = blockIdx.x * TILE * TILE;
    tile[y][x] = in[base + y * TILE + x];
    __syncthreads();
    out[base + y * TILE + x] = tile[x][y] * 2.0f;
}

torch::Tensor tile_transpose(torch::Tensor x) {
    auto out = torch::empty_like(x);
    int n = x.numel();
    dim3 block(TILE, TILE);
    tile_transpose_kernel<<<n / (TILE * TILE), block>>>(x.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}
