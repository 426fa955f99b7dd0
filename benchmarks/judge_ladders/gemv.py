"""Matrix-vector product, after karpathy/llm.c (MIT) dev/cuda/matmul_forward.cu's progression from a thread an
output to cooperative (warp) reductions, and NVIDIA's "CUDA Pro Tip: Increase Performance with Vectorized Memory
Access": a thread a row → a warp a row → a warp a row with float4 loads. 65536 × 2048 fp32."""

from ladder import WARP_ADD, Ladder, Step, reference

REFERENCE = reference(
    forward='return a @ x',
    sizes='ROWS, COLS = 65536, 2048',
    inputs='[torch.rand(ROWS, COLS), torch.rand(COLS)]',
)

HOST = '''
torch::Tensor run(torch::Tensor a, torch::Tensor x) {
    const int rows = a.size(0), cols = a.size(1);
    auto y = torch::empty({rows}, a.options());
    const float* A = a.data_ptr<float>();
    const float* X = x.data_ptr<float>();
    float* Y = y.data_ptr<float>();
    LAUNCH
    return y;
}
'''

ROW_PER_THREAD = '''
__global__ void gemv_row_per_thread(const float* A, const float* x, float* y, int rows, int cols) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;  // neighbouring threads read rows 8 KB apart
    if (r >= rows) return;
    float s = 0.0f;
    for (int c = 0; c < cols; ++c) s += A[(size_t)r * cols + c] * x[c];
    y[r] = s;
}
'''


WARP_PER_ROW = WARP_ADD + '''
__global__ void gemv_warp_per_row(const float* A, const float* x, float* y, int rows, int cols) {
    const int r = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (r >= rows) return;
    const float* ar = A + (size_t)r * cols;
    float s = 0.0f;
    for (int c = lane; c < cols; c += 32) s += ar[c] * x[c];
    s = warp_add(s);
    if (lane == 0) y[r] = s;
}
'''

WARP_FLOAT4 = WARP_ADD + '''
__global__ void gemv_warp_float4(const float* A, const float* x, float* y, int rows, int cols) {
    const int r = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (r >= rows) return;
    const float4* ar = reinterpret_cast<const float4*>(A + (size_t)r * cols);
    const float4* x4 = reinterpret_cast<const float4*>(x);
    float s = 0.0f;
    for (int c = lane; c < cols / 4; c += 32) {
        const float4 a = ar[c], b = x4[c];
        s += a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
    }
    s = warp_add(s);
    if (lane == 0) y[r] = s;
}
'''

LADDER = Ladder(
    key="gemv",
    title="Matrix-vector product ladder",
    origin="After karpathy/llm.c (MIT) dev/cuda/matmul_forward.cu and NVIDIA's 'CUDA Pro Tip: Increase "
           "Performance with Vectorized Memory Access'.",
    reference=REFERENCE,
    args="a, x",
    signature="torch::Tensor run(torch::Tensor a, torch::Tensor x)",
    host=HOST,
    steps=(
        Step("a thread a row", ROW_PER_THREAD,
             "gemv_row_per_thread<<<(rows + 255) / 256, 256>>>(A, X, Y, rows, cols);", "gemv_row_per_thread",
             "coalesce-global-access"),
        Step("a warp a row", WARP_PER_ROW,
             "gemv_warp_per_row<<<(rows + 7) / 8, 256>>>(A, X, Y, rows, cols);", "gemv_warp_per_row",
             "vectorize-memory-access"),
        Step("a warp a row, float4 loads", WARP_FLOAT4,
             "gemv_warp_float4<<<(rows + 7) / 8, 256>>>(A, X, Y, rows, cols);", "gemv_warp_float4", None),
    ),
)
