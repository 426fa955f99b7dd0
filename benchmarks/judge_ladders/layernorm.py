"""Layer norm without affine parameters, after karpathy/llm.c (MIT) dev/cuda/layernorm_forward.cu kernels 1 and
3 and a float4 step: a row a thread → a warp a row with shuffle reductions → float4 loads. 65536 rows of 1024."""

from ladder import WARP_ADD, Ladder, Step, one_input_host, reference

REFERENCE = reference(
    forward='return F.layer_norm(x, (x.shape[-1],), eps=1e-5)',
    sizes='ROWS, COLS = 65536, 1024',
    inputs='[torch.randn(ROWS, COLS)]',
)

HOST = one_input_host("torch::empty_like(x)", matrix=True)

ROW_PER_THREAD = '''
__global__ void layernorm_row_per_thread(const float* x, float* y, int rows, int cols) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;  // neighbouring threads read rows 4 KB apart
    if (r >= rows) return;
    const float* xr = x + (size_t)r * cols;
    float* yr = y + (size_t)r * cols;
    float mean = 0.0f;
    for (int c = 0; c < cols; ++c) mean += xr[c];
    mean /= cols;
    float var = 0.0f;
    for (int c = 0; c < cols; ++c) var += (xr[c] - mean) * (xr[c] - mean);
    const float rstd = rsqrtf(var / cols + 1e-5f);
    for (int c = 0; c < cols; ++c) yr[c] = (xr[c] - mean) * rstd;
}
'''


WARP_PER_ROW = WARP_ADD + '''
__global__ void layernorm_warp(const float* x, float* y, int rows, int cols) {
    const int r = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (r >= rows) return;
    const float* xr = x + (size_t)r * cols;
    float* yr = y + (size_t)r * cols;
    float mean = 0.0f;
    for (int c = lane; c < cols; c += 32) mean += xr[c];
    mean = warp_add(mean) / cols;
    float var = 0.0f;
    for (int c = lane; c < cols; c += 32) var += (xr[c] - mean) * (xr[c] - mean);
    const float rstd = rsqrtf(warp_add(var) / cols + 1e-5f);
    for (int c = lane; c < cols; c += 32) yr[c] = (xr[c] - mean) * rstd;
}
'''

WARP_FLOAT4 = WARP_ADD + '''
__global__ void layernorm_warp_float4(const float* x, float* y, int rows, int cols) {
    const int r = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (r >= rows) return;
    const float4* xr = reinterpret_cast<const float4*>(x + (size_t)r * cols);
    float4* yr = reinterpret_cast<float4*>(y + (size_t)r * cols);
    const int cols4 = cols / 4;
    float mean = 0.0f;
    for (int c = lane; c < cols4; c += 32) {
        const float4 v = xr[c];
        mean += (v.x + v.y) + (v.z + v.w);
    }
    mean = warp_add(mean) / cols;
    float var = 0.0f;
    for (int c = lane; c < cols4; c += 32) {
        const float4 v = xr[c];
        var += (v.x - mean) * (v.x - mean) + (v.y - mean) * (v.y - mean) + (v.z - mean) * (v.z - mean)
             + (v.w - mean) * (v.w - mean);
    }
    const float rstd = rsqrtf(warp_add(var) / cols + 1e-5f);
    for (int c = lane; c < cols4; c += 32) {
        const float4 v = xr[c];
        yr[c] = make_float4((v.x - mean) * rstd, (v.y - mean) * rstd, (v.z - mean) * rstd, (v.w - mean) * rstd);
    }
}
'''

LADDER = Ladder(
    key="layernorm",
    title="Layer norm ladder",
    origin="After karpathy/llm.c (MIT), dev/cuda/layernorm_forward.cu kernels 1 and 3.",
    reference=REFERENCE,
    args="x",
    signature="torch::Tensor run(torch::Tensor x)",
    host=HOST,
    steps=(
        Step("a row a thread", ROW_PER_THREAD,
             "layernorm_row_per_thread<<<(rows + 255) / 256, 256>>>(in, out, rows, cols);",
             "layernorm_row_per_thread", "coalesce-global-access"),
        Step("a warp a row, shuffle reductions", WARP_PER_ROW,
             "layernorm_warp<<<(rows + 7) / 8, 256>>>(in, out, rows, cols);", "layernorm_warp",
             "vectorize-memory-access"),
        Step("a warp a row, float4 loads and stores", WARP_FLOAT4,
             "layernorm_warp_float4<<<(rows + 7) / 8, 256>>>(in, out, rows, cols);", "layernorm_warp_float4", None),
    ),
)
