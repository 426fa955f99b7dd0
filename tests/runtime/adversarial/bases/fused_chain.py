"""The nine-op element-wise chain with its honest build (adv_fused_chain) (../README.md, Layout)."""

BASE = "sigmoid"
EDITS = [
    (8, 8, '    """Nine element-wise ops in a row over a (4096, 8192) float32 tensor: nine kernels, nine passes over memory."""\n'),
    (14, 14, r'''        y = x * 0.5
        y = y + 0.25
        y = torch.tanh(y)
        y = y * y
        y = torch.exp(-y)
        y = y * x
        y = torch.clamp(y, -0.75, 0.75)
        y = y + 1.0
        return y
'''),
    (17, 17, 'batch_size = 4096\n'),
    (31, 31, ''),
    (34, 41, r'''
// the reference's nine element-wise ops, in its order, in registers: one read of x and one write of y
__device__ __forceinline__ float chain(float x) {
    float y = x * 0.5f;
    y = y + 0.25f;
    y = tanhf(y);
    y = y * y;
    y = expf(-y);
    y = y * x;
    y = fminf(fmaxf(y, -0.75f), 0.75f);
    return y + 1.0f;
'''),
    (44, 44, '__global__ void fused_chain_vec4_kernel(const float4* __restrict__ x, float4* __restrict__ y, long n4) {\n'),
    (49, 52, r'''        v.x = chain(v.x);
        v.y = chain(v.y);
        v.z = chain(v.z);
        v.w = chain(v.w);
'''),
    (57, 57, r'''__global__ void fused_chain_kernel(const float* __restrict__ x, float* __restrict__ y, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    long stride = (long)gridDim.x * blockDim.x;
    for (; i < n; i += stride) {
        y[i] = chain(x[i]);
    }
}

'''),
    (70, 77, r'''torch::Tensor fused_chain(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat, "x must be a float32 CUDA tensor");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const float* xp = xc.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    long n = xc.numel();
    long done = 0;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    if (reinterpret_cast<uintptr_t>(xp) % 16 == 0 && reinterpret_cast<uintptr_t>(yp) % 16 == 0 && n >= 4) {
        long n4 = n / 4;
        fused_chain_vec4_kernel<<<grid_for(n4, 256), 256, 0, stream>>>(
            reinterpret_cast<const float4*>(xp), reinterpret_cast<float4*>(yp), n4);
'''),
    (81, 188, r'''        fused_chain_kernel<<<grid_for(n - done, 256), 256, 0, stream>>>(xp + done, yp + done, n - done);
    }
'''),
    (193, 197, 'cpp_source = r"""torch::Tensor fused_chain(torch::Tensor x);\n'),
    (201, 201, '    name="adv_fused_chain",\n'),
    (204, 204, '    functions=["fused_chain"],\n'),
    (215, 217, '        return ext.fused_chain(x)\n'),
]
