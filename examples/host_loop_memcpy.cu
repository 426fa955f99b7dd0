// Host code that copies and synchronises inside its loop: every iteration waits for the GPU and moves the
// whole array across PCIe, so the GPU idles between small kernels. The launch is not checked either.
// Expect: CL6xx on the `cudaMemcpy` and `cudaDeviceSynchronize` calls inside the `for` loop (hoist them
// out, keep the data on the device), and on the unchecked launch.
#include <cuda_runtime.h>

__global__ void relax(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1) {
        x[i] = 0.5f * x[i] + 0.25f * (x[i - 1] + x[i + 1]);
    }
}

void iterate(float* host, float* device, int n, int steps) {
    for (int s = 0; s < steps; ++s) {
        cudaMemcpy(device, host, n * sizeof(float), cudaMemcpyHostToDevice);
        relax<<<(n + 255) / 256, 256>>>(device, n);
        cudaDeviceSynchronize();
        cudaMemcpy(host, device, n * sizeof(float), cudaMemcpyDeviceToHost);
    }
}
