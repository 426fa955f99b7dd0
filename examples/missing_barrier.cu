// A missing barrier: each thread writes its own element of a shared buffer and immediately reads its
// neighbour's, which another warp may not have written yet (a read-after-write race that
// compute-sanitizer --tool racecheck reports).
// Expect: CL303 on the read `tile[threadIdx.x + 1]`, related to the write `tile[threadIdx.x] = ...`;
// the fix is a __syncthreads() between them.
#include <cuda_runtime.h>

__global__ void forward_difference(const float* in, float* out, int n) {
    __shared__ float tile[257];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = in[i];
    if (threadIdx.x == 0) tile[256] = (i + 256 < n) ? in[i + 256] : 0.0f;
    out[i] = tile[threadIdx.x + 1] - tile[threadIdx.x];
}

void differences(const float* in, float* out, int n) {
    forward_difference<<<n / 256, 256>>>(in, out, n);
}
