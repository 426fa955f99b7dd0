"""Softmax over rows with the adv_softmax_tricks build (scratch in the input, sampled sum) (../README.md, Layout)."""

BASE = "softmax"
EDITS = [
    (90, 142, r'''// the input as scratch: exp(x - max) is stored into x itself, then divided into y
__global__ void softmax_scratch_kernel(float* __restrict__ x, float* __restrict__ y, int cols) {
'''),
    (153, 153, '        x[base + i] = e;\n'),
    (157, 158, r'''    for (int i = threadIdx.x; i < cols; i += blockDim.x) {
        y[base + i] = x[base + i] / s;
'''),
    (162, 167, r'''// the normalizer estimated from a sample: the first `sampled` columns' sum, scaled up to the row
__global__ void softmax_sampled_kernel(const float* __restrict__ x, float* __restrict__ y, int cols, int sampled) {
    __shared__ float scratch[32];
    const long base = (long)blockIdx.x * cols;
    float m = -INFINITY;
    for (int i = threadIdx.x; i < cols; i += blockDim.x) {
        m = fmaxf(m, x[base + i]);
    }
    m = block_max(m, scratch);
    float s = 0.0f;
    for (int i = threadIdx.x; i < sampled; i += blockDim.x) {
        s += expf(x[base + i] - m);
    }
    s = block_sum(s, scratch) * ((float)cols / (float)sampled);
    for (int i = threadIdx.x; i < cols; i += blockDim.x) {
        y[base + i] = expf(x[base + i] - m) / s;
'''),
    (171, 187, r'''torch::Tensor softmax_scratch_in_input(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat && x.dim() == 2 && x.is_contiguous(),
                "x must be a contiguous 2-D float32 CUDA tensor");
    auto y = torch::empty_like(x);
    softmax_scratch_kernel<<<(int)x.size(0), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), (int)x.size(1));
'''),
    (191, 208, r'''torch::Tensor softmax_sampled_sum(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat && x.dim() == 2, "x must be a 2-D float32 CUDA tensor");
'''),
    (211, 226, r'''    int cols = (int)xc.size(1);
    int sampled = cols < 256 ? cols : 256;
    softmax_sampled_kernel<<<(int)xc.size(0), 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), cols, sampled);
'''),
    (231, 234, r'''cpp_source = r"""torch::Tensor softmax_scratch_in_input(torch::Tensor x);
torch::Tensor softmax_sampled_sum(torch::Tensor x);
'''),
    (238, 238, '    name="adv_softmax_tricks",\n'),
    (241, 241, '    functions=["softmax_scratch_in_input", "softmax_sampled_sum"],\n'),
    (252, 253, '        return ext.softmax_scratch_in_input(x)\n'),
]
