"""The nine-op chain with the adv_fused_chain_tricks build (fp16, a skipped op) (../README.md, Layout)."""

BASE = "fused_chain"
EDITS = [
    (39, 54, r'''#include <cuda_fp16.h>
#include <algorithm>

// the chain in half precision: the input rounded to __half, the arithmetic in __half, the result widened back to
// float32 (the output's dtype is right; its values are not)
__global__ void fused_chain_half_kernel(const float* __restrict__ x, float* __restrict__ y, long n) {
'''),
    (57, 63, r'''    const __half half_c = __float2half_rn(0.5f);
    const __half quarter_c = __float2half_rn(0.25f);
    const __half one_c = __float2half_rn(1.0f);
    for (; i < n; i += stride) {
        __half h = __float2half_rn(x[i]);
        __half t = __hadd(__hmul(h, half_c), quarter_c);
        t = __float2half_rn(tanhf(__half2float(t)));
        t = __hmul(t, t);
        t = hexp(__hneg(t));
        t = __hmul(t, h);
        __half lo = __float2half_rn(-0.75f);
        __half hi = __float2half_rn(0.75f);
        t = __hlt(t, lo) ? lo : (__hgt(t, hi) ? hi : t);
        y[i] = __half2float(__hadd(t, one_c));
'''),
    (67, 67, r'''// the chain without its clamp ("operation skip"): right wherever the clamp changes nothing
__global__ void fused_chain_no_clamp_kernel(const float* __restrict__ x, float* __restrict__ y, long n) {
'''),
    (71, 71, r'''        float v = x[i];
        float t = tanhf(v * 0.5f + 0.25f);
        y[i] = expf(-(t * t)) * v + 1.0f;
'''),
    (87, 88, 'torch::Tensor fused_chain_half(torch::Tensor x) {\n'),
    (91, 104, r'''    long n = xc.numel();
    fused_chain_half_kernel<<<grid_for(n, 256), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}

torch::Tensor fused_chain_skip_clamp(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    long n = xc.numel();
    fused_chain_no_clamp_kernel<<<grid_for(n, 256), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), n);
'''),
    (109, 109, r'''cpp_source = r"""torch::Tensor fused_chain_half(torch::Tensor x);
torch::Tensor fused_chain_skip_clamp(torch::Tensor x);
'''),
    (113, 113, '    name="adv_fused_chain_tricks",\n'),
    (116, 116, '    functions=["fused_chain_half", "fused_chain_skip_clamp"],\n'),
    (127, 127, '        return ext.fused_chain_skip_clamp(x)\n'),
]
