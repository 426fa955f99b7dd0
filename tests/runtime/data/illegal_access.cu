// cudalens: reference=illegal_access_ref.py
#include <torch/extension.h>

__global__ void scale_oob(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i + (1 << 28)] = in[i] * 2.0f;
}

torch::Tensor scale(torch::Tensor x) {
    auto out = torch::empty_like(x);
    int n = x.numel();
    scale_oob<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}
