// Coalesced copy: neighbouring threads touch neighbouring floats.
__global__ void copy_rows(const float* in, float* out, int n) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < n && y < n) {
        out[y * n + x] = in[y * n + x];
    }
}
