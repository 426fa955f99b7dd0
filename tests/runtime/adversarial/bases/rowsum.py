"""Row sums with the adv_rowsum build (../README.md, Layout)."""

BASE = "fused_chain"
EDITS = [
    (8, 8, '    """The sum of each row of an (8192, 8192) float32 tensor (KernelBench level 1, problem 47 with dim=1)."""\n'),
    (14, 22, '        return torch.sum(x, dim=1)\n'),
    (25, 26, r'''rows = 8192
cols = 8192
'''),
    (30, 30, '    return [torch.randn(rows, cols)]\n'),
    (39, 39, ''),
    (42, 51, r'''__device__ __forceinline__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) {
        v += __shfl_xor_sync(0xffffffffu, v, offset);
    }
    return v;
'''),
    (54, 63, r'''// the block's sum, valid in thread 0 (blockDim.x a multiple of 32); `scratch` holds 32 floats of shared memory
__device__ float block_sum(float v, float* scratch) {
    int lane = threadIdx.x & 31;
    int warp = threadIdx.x >> 5;
    v = warp_sum(v);
    if (lane == 0) {
        scratch[warp] = v;
    }
    __syncthreads();
    if (warp == 0) {
        v = lane < (int)(blockDim.x >> 5) ? scratch[lane] : 0.0f;
        v = warp_sum(v);
    }
    return v;  // the block's sum, in thread 0
}

// blockIdx.y is the row, blockIdx.x a chunk of its columns (float4); each block adds its partial sum to out[row],
// which the caller zeroed (torch.zeros: a fill kernel beside this one)
__global__ void rowsum_atomic_kernel(const float4* __restrict__ x, float* __restrict__ out, int cols4, int chunk4) {
    __shared__ float scratch[32];
    const float4* row = x + (long)blockIdx.y * cols4;
    int begin = blockIdx.x * chunk4;
    int end = min(begin + chunk4, cols4);
    float s = 0.0f;
    for (int i = begin + threadIdx.x; i < end; i += blockDim.x) {
        float4 v = row[i];
        s += (v.x + v.y) + (v.z + v.w);
    }
    s = block_sum(s, scratch);
    if (threadIdx.x == 0) {
        atomicAdd(out + blockIdx.y, s);
'''),
    (67, 71, r'''// one block per row, no atomics
__global__ void rowsum_block_kernel(const float4* __restrict__ x, float* __restrict__ out, int cols4) {
    __shared__ float scratch[32];
    const float4* row = x + (long)blockIdx.x * cols4;
    float s = 0.0f;
    for (int i = threadIdx.x; i < cols4; i += blockDim.x) {
        float4 v = row[i];
        s += (v.x + v.y) + (v.z + v.w);
    }
    s = block_sum(s, scratch);
    if (threadIdx.x == 0) {
        out[blockIdx.x] = s;
'''),
    (75, 84, r'''static void check_rows(const torch::Tensor& x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat && x.dim() == 2 && x.is_contiguous(),
                "x must be a contiguous 2-D float32 CUDA tensor");
    TORCH_CHECK(x.size(1) % 4 == 0 && reinterpret_cast<uintptr_t>(x.data_ptr()) % 16 == 0,
                "x's rows must be float4-aligned (columns a multiple of 4)");
'''),
    (87, 105, r'''void rowsum_atomic(torch::Tensor x, torch::Tensor out) {
    check_rows(x);
    TORCH_CHECK(out.is_cuda() && out.scalar_type() == torch::kFloat && out.is_contiguous() && out.numel() == x.size(0),
                "out must be a zeroed float32 CUDA vector with one element per row");
    int rows = (int)x.size(0);
    int cols4 = (int)(x.size(1) / 4);
    int chunks = 4;
    int chunk4 = (cols4 + chunks - 1) / chunks;
    dim3 grid(chunks, rows);
    rowsum_atomic_kernel<<<grid, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        reinterpret_cast<const float4*>(x.data_ptr<float>()), out.data_ptr<float>(), cols4, chunk4);
}

torch::Tensor rowsum_block(torch::Tensor x) {
    check_rows(x);
    int rows = (int)x.size(0);
    auto out = torch::empty({rows}, x.options());
    rowsum_block_kernel<<<rows, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        reinterpret_cast<const float4*>(x.data_ptr<float>()), out.data_ptr<float>(), (int)(x.size(1) / 4));
    return out;
'''),
    (109, 109, r'''cpp_source = r"""void rowsum_atomic(torch::Tensor x, torch::Tensor out);
torch::Tensor rowsum_block(torch::Tensor x);
'''),
    (113, 113, '    name="adv_rowsum",\n'),
    (116, 116, '    functions=["rowsum_atomic", "rowsum_block"],\n'),
    (127, 127, r'''        out = torch.zeros(x.shape[0], device=x.device, dtype=x.dtype)  # a fill kernel: the honest helper launch
        ext.rowsum_atomic(x, out)
        return out
'''),
]
