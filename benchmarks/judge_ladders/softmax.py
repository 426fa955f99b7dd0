"""Row softmax, after karpathy/llm.c (MIT) dev/cuda/softmax_forward.cu, kernels 1-3 and a float4 step: a row a
thread → a block a row with shared-memory reductions → warp-shuffle reductions → float4 loads. 65536 rows of 512."""

from ladder import WARP_ADD, Ladder, Step, one_input_host, reference

REFERENCE = reference(
    forward='return torch.softmax(x, dim=-1)',
    sizes='ROWS, COLS = 65536, 512',
    inputs='[torch.randn(ROWS, COLS)]',
)

HOST = one_input_host("torch::empty_like(x)", matrix=True)

ROW_PER_THREAD = '''
__global__ void softmax_row_per_thread(const float* x, float* y, int rows, int cols) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;  // neighbouring threads read rows 2 KB apart
    if (r >= rows) return;
    const float* xr = x + (size_t)r * cols;
    float* yr = y + (size_t)r * cols;
    float m = -INFINITY;
    for (int c = 0; c < cols; ++c) m = fmaxf(m, xr[c]);
    float sum = 0.0f;
    for (int c = 0; c < cols; ++c) sum += expf(xr[c] - m);
    for (int c = 0; c < cols; ++c) yr[c] = expf(xr[c] - m) / sum;
}
'''

BLOCK_SHARED = '''
__global__ void softmax_block_shared(const float* x, float* y, int rows, int cols) {
    __shared__ float s[256];
    const int tid = threadIdx.x;
    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;
    float m = -INFINITY;
    for (int c = tid; c < cols; c += 256) m = fmaxf(m, xr[c]);
    s[tid] = m;
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
        if (tid < k) s[tid] = fmaxf(s[tid], s[tid + k]);
        __syncthreads();
    }
    m = s[0];
    __syncthreads();
    float sum = 0.0f;
    for (int c = tid; c < cols; c += 256) sum += expf(xr[c] - m);
    s[tid] = sum;
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
        if (tid < k) s[tid] += s[tid + k];
        __syncthreads();
    }
    sum = s[0];
    for (int c = tid; c < cols; c += 256) yr[c] = expf(xr[c] - m) / sum;
}
'''

WARP_REDUCE = WARP_ADD + '''
__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
'''

WARP_PER_ROW = WARP_REDUCE + '''
__global__ void softmax_warp_per_row(const float* x, float* y, int rows, int cols) {
    const int r = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (r >= rows) return;
    const float* xr = x + (size_t)r * cols;
    float* yr = y + (size_t)r * cols;
    float m = -INFINITY;
    for (int c = lane; c < cols; c += 32) m = fmaxf(m, xr[c]);
    m = warp_max(m);
    float sum = 0.0f;
    for (int c = lane; c < cols; c += 32) sum += expf(xr[c] - m);
    sum = warp_add(sum);
    for (int c = lane; c < cols; c += 32) yr[c] = expf(xr[c] - m) / sum;
}
'''

WARP_PER_ROW_FLOAT4 = WARP_REDUCE + '''
__global__ void softmax_warp_float4(const float* x, float* y, int rows, int cols) {
    const int r = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (r >= rows) return;
    const float4* xr = reinterpret_cast<const float4*>(x + (size_t)r * cols);
    float4* yr = reinterpret_cast<float4*>(y + (size_t)r * cols);
    const int cols4 = cols / 4;  // cols % 4 == 0 here
    float m = -INFINITY;
    for (int c = lane; c < cols4; c += 32) {
        const float4 v = xr[c];
        m = fmaxf(m, fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w)));
    }
    m = warp_max(m);
    float sum = 0.0f;
    for (int c = lane; c < cols4; c += 32) {
        const float4 v = xr[c];
        sum += expf(v.x - m) + expf(v.y - m) + expf(v.z - m) + expf(v.w - m);
    }
    sum = warp_add(sum);
    for (int c = lane; c < cols4; c += 32) {
        const float4 v = xr[c];
        yr[c] = make_float4(expf(v.x - m) / sum, expf(v.y - m) / sum, expf(v.z - m) / sum, expf(v.w - m) / sum);
    }
}
'''

LADDER = Ladder(
    key="softmax",
    title="Row softmax ladder",
    origin="After karpathy/llm.c (MIT), dev/cuda/softmax_forward.cu kernels 1-3.",
    reference=REFERENCE,
    args="x",
    signature="torch::Tensor run(torch::Tensor x)",
    host=HOST,
    steps=(
        Step("a row a thread", ROW_PER_THREAD,
             "softmax_row_per_thread<<<(rows + 255) / 256, 256>>>(in, out, rows, cols);",
             "softmax_row_per_thread", "coalesce-global-access"),
        Step("a block a row, shared-memory tree reductions", BLOCK_SHARED,
             "softmax_block_shared<<<rows, 256>>>(in, out, rows, cols);", "softmax_block_shared",
             "use-warp-shuffles"),
        Step("a warp a row, shuffle reductions", WARP_PER_ROW,
             "softmax_warp_per_row<<<(rows + 7) / 8, 256>>>(in, out, rows, cols);", "softmax_warp_per_row",
             "vectorize-memory-access"),
        Step("a warp a row, float4 loads and stores", WARP_PER_ROW_FLOAT4,
             "softmax_warp_float4<<<(rows + 7) / 8, 256>>>(in, out, rows, cols);", "softmax_warp_float4", None),
    ),
)
