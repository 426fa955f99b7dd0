// A barrier inside a thread-dependent branch: the first half of the block loads the tile and synchronises
// inside the `if`; the second half skips that barrier and waits at the next one, so the two halves' barriers
// pair up wrongly and the second half reads the tile before it is written (compute-sanitizer --tool
// synccheck reports "Barrier error detected. Divergent thread(s) in block").
// Expect: CL302 on the `__syncthreads()` inside the `if`, pointing at the barrier the others wait at.
#include <cuda_runtime.h>

__global__ void smooth_halves(float* data) {
    __shared__ float buf[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x < 128) {
        buf[threadIdx.x] = data[i];
        buf[threadIdx.x + 128] = data[i + 128];
        __syncthreads();
    }
    __syncthreads();
    float left = threadIdx.x > 0 ? buf[threadIdx.x - 1] : 0.0f;
    data[i] = 0.5f * (buf[threadIdx.x] + left);
}

void smooth(float* data, int n) {
    smooth_halves<<<n / 256, 256>>>(data);
}
