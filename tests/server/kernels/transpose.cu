// Naive transpose: the store walks memory with a stride of n between neighbouring threads.
__global__ void transpose_naive(const float* in, float* out, int n) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < n && y < n) {
        out[x * n + y] = in[y * n + x];
    }
}

void launch_transpose(const float* in, float* out, int n) {
    dim3 block(32, 8);
    dim3 grid((n + 31) / 32, (n + 7) / 8);
    transpose_naive<<<grid, block>>>(in, out, n);
}
