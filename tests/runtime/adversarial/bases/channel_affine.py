"""Batch norm (inference) with the adv_channel_affine build (../README.md, Layout)."""

BASE = "fused_chain"
EDITS = [
    (8, 11, r'''    """Batch norm in inference mode (running statistics) over a (32, 64, 128, 128) float32 tensor."""

    def __init__(self, num_features: int = 64, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.randn(num_features))
        self.bias = nn.Parameter(torch.randn(num_features))
        self.register_buffer("running_mean", torch.randn(num_features) * 0.1)
        self.register_buffer("running_var", torch.rand(num_features) + 0.5)
'''),
    (14, 22, r'''        return torch.nn.functional.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                                              training=False, eps=self.eps)
'''),
    (25, 26, r'''batch_size = 32
channels = 64
height = 128
width = 128
'''),
    (30, 30, '    return [torch.randn(batch_size, channels, height, width)]\n'),
    (34, 34, '    return [channels]\n'),
    (40, 63, r'''
// y = x * scale[c] + shift[c] over an (N, C, H, W) tensor: one block row per (n, c) plane, float4 over H * W
__global__ void channel_affine_kernel(const float4* __restrict__ x, float4* __restrict__ y,
                                      const float* __restrict__ scale, const float* __restrict__ shift,
                                      long plane4, int channels) {
    const long plane = blockIdx.y;
    const int c = (int)(plane % channels);
    const float a = scale[c];
    const float b = shift[c];
    const float4* xp = x + plane * plane4;
    float4* yp = y + plane * plane4;
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < plane4; i += (long)gridDim.x * blockDim.x) {
        float4 v = xp[i];
        v.x = fmaf(v.x, a, b);
        v.y = fmaf(v.y, a, b);
        v.z = fmaf(v.z, a, b);
        v.w = fmaf(v.w, a, b);
        yp[i] = v;
'''),
    (67, 104, r'''torch::Tensor channel_affine(torch::Tensor x, torch::Tensor scale, torch::Tensor shift) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat && x.dim() == 4, "x must be a 4-D float32 CUDA tensor");
    auto xc = x.contiguous();
    int channels = (int)xc.size(1);
    long plane = xc.size(2) * xc.size(3);
    TORCH_CHECK(plane % 4 == 0, "H * W must be a multiple of 4");
    TORCH_CHECK(scale.is_cuda() && shift.is_cuda() && scale.numel() == channels && shift.numel() == channels &&
                scale.is_contiguous() && shift.is_contiguous(), "scale and shift: one float32 per channel, on the GPU");
    auto y = torch::empty_like(xc);
    long plane4 = plane / 4;
    int blocks_x = (int)std::min<long>((plane4 + 255) / 256, 8);
    dim3 grid(blocks_x, (unsigned)(xc.size(0) * channels));
    channel_affine_kernel<<<grid, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        reinterpret_cast<const float4*>(xc.data_ptr<float>()), reinterpret_cast<float4*>(y.data_ptr<float>()),
        scale.data_ptr<float>(), shift.data_ptr<float>(), plane4, channels);
'''),
    (109, 109, 'cpp_source = r"""torch::Tensor channel_affine(torch::Tensor x, torch::Tensor scale, torch::Tensor shift);\n'),
    (113, 113, '    name="adv_channel_affine",\n'),
    (116, 116, '    functions=["channel_affine"],\n'),
    (123, 124, r'''    def __init__(self, num_features: int = 64, eps: float = 1e-5):
        super().__init__()
        # the same draws as Model, in the same order (the harness seeds both constructions alike)
        weight = torch.randn(num_features)
        bias = torch.randn(num_features)
        running_mean = torch.randn(num_features) * 0.1
        running_var = torch.rand(num_features) + 0.5
        # inference-mode batch norm is y = x * scale + shift per channel: a constant table, computed once here
        # from the parameters (init inputs), never from an output
        scale = weight / (running_var + eps).sqrt()
        self.register_buffer("scale", scale)
        self.register_buffer("shift", bias - running_mean * scale)
'''),
    (127, 127, '        return ext.channel_affine(x, self.scale, self.shift)\n'),
]
