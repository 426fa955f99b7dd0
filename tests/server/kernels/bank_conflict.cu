// Each thread reads its own row of the tile: 32 threads hit the same bank.
__global__ void row_sums(const float* in, float* out) {
    __shared__ float tile[32][32];
    int tx = threadIdx.x;
    for (int i = 0; i < 32; ++i) {
        tile[i][tx] = in[i * 32 + tx];
    }
    __syncthreads();
    float sum = 0.0f;
    for (int i = 0; i < 32; ++i) {
        sum += tile[threadIdx.x][i];
    }
    out[blockIdx.x * 32 + tx] = sum;
}

void launch_row_sums(const float* in, float* out, int blocks) {
    row_sums<<<blocks, 32>>>(in, out);
}
