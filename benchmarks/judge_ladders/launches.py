"""Launches fused into one, after NVIDIA's "CUDA Graphs" and kernel-fusion guidance (CUDA C++ Best Practices
Guide) and karpathy/llm.c (MIT) dev/cuda/gelu_forward.cu with its bias fused as in llm.c's matmul epilogue: a
launch a row → one launch for every row; bias then GELU in two kernels → one kernel; a row softmax in three
kernels (row maxima, row sums, normalisation) → one (llm.c's softmax_forward.cu fuses them from kernel 1 on)."""

from ladder import Ladder, Step, one_input_host, reference
from softmax import REFERENCE as SOFTMAX_REFERENCE
from softmax import WARP_PER_ROW, WARP_REDUCE

ROWS_REFERENCE = reference(
    forward='return torch.relu(x)',
    sizes='ROWS, COLS = 256, 16384',
    inputs='[torch.randn(ROWS, COLS)]',
)

ROWS_HOST = one_input_host("torch::empty_like(x)", matrix=True)

RELU = '''
__global__ void relu_rows(const float* x, float* y, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}
'''

PER_ROW = Ladder(
    key="launch_rows",
    title="A launch a row ladder",
    origin="After the CUDA C++ Best Practices Guide (kernel launch overhead) and NVIDIA's 'Getting Started with "
           "CUDA Graphs'.",
    reference=ROWS_REFERENCE,
    args="x",
    signature="torch::Tensor run(torch::Tensor x)",
    host=ROWS_HOST,
    steps=(
        Step("a launch for each row", RELU,
             "for (int r = 0; r < rows; ++r)\n"
             "        relu_rows<<<(cols + 255) / 256, 256>>>(in + (size_t)r * cols, out + (size_t)r * cols, cols);",
             "relu_rows", "fuse-kernel-launches"),
        Step("one launch for every row", RELU,
             "relu_rows<<<(rows * cols + 255) / 256, 256>>>(in, out, rows * cols);", "relu_rows", None),
    ),
)

GELU_REFERENCE = reference(
    forward='return F.gelu(x + bias, approximate="tanh")',
    sizes='ROWS, COLS = 8192, 4096',
    inputs='[torch.randn(ROWS, COLS), torch.randn(COLS)]',
)

GELU = '''
__device__ __forceinline__ float gelu_tanh(float v) {
    const float k = 0.7978845608028654f;  // sqrt(2 / pi)
    return 0.5f * v * (1.0f + tanhf(k * (v + 0.044715f * v * v * v)));
}
'''

GELU_HOST = '''
torch::Tensor run(torch::Tensor x, torch::Tensor bias) {
    const int cols = x.size(1), n = x.numel();
    auto y = torch::empty_like(x);
    const float* in = x.data_ptr<float>();
    const float* b = bias.data_ptr<float>();
    float* out = y.data_ptr<float>();
    LAUNCH
    return y;
}
'''

TWO_KERNELS = GELU + '''
__global__ void add_bias(const float* x, const float* bias, float* y, int n, int cols) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + bias[i % cols];
}

__global__ void gelu_inplace(float* y, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = gelu_tanh(y[i]);
}
'''

FUSED = GELU + '''
__global__ void bias_gelu(const float* x, const float* bias, float* y, int n, int cols) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = gelu_tanh(x[i] + bias[i % cols]);
}
'''

BIAS_GELU = Ladder(
    key="bias_gelu",
    title="Bias and GELU ladder",
    origin="After karpathy/llm.c (MIT), dev/cuda/gelu_forward.cu, with the bias fused as llm.c's matmul epilogue.",
    reference=GELU_REFERENCE,
    args="x, bias",
    signature="torch::Tensor run(torch::Tensor x, torch::Tensor bias)",
    host=GELU_HOST,
    steps=(
        Step("bias, then GELU in place: two kernels", TWO_KERNELS,
             "add_bias<<<(n + 255) / 256, 256>>>(in, b, out, n, cols);\n"
             "    gelu_inplace<<<(n + 255) / 256, 256>>>(out, n);",
             "add_bias", "fuse-kernel-launches"),
        Step("bias and GELU in one kernel", FUSED,
             "bias_gelu<<<(n + 255) / 256, 256>>>(in, b, out, n, cols);", "bias_gelu", None),
    ),
)

THREE_KERNELS = WARP_REDUCE + '''
__global__ void row_max(const float* x, float* m, int rows, int cols) {
    const int r = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (r >= rows) return;
    float v = -INFINITY;
    for (int c = lane; c < cols; c += 32) v = fmaxf(v, x[(size_t)r * cols + c]);
    v = warp_max(v);
    if (lane == 0) m[r] = v;
}

__global__ void row_exp_sum(const float* x, const float* m, float* s, int rows, int cols) {
    const int r = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (r >= rows) return;
    float v = 0.0f;
    for (int c = lane; c < cols; c += 32) v += expf(x[(size_t)r * cols + c] - m[r]);
    v = warp_add(v);
    if (lane == 0) s[r] = v;
}

__global__ void row_normalize(const float* x, const float* m, const float* s, float* y, int rows, int cols) {
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (size_t)rows * cols) return;
    const int r = i / cols;
    y[i] = expf(x[i] - m[r]) / s[r];
}
'''

SOFTMAX = Ladder(
    key="softmax_fuse",
    title="Softmax in three kernels ladder",
    origin="After karpathy/llm.c (MIT), dev/cuda/softmax_forward.cu (one kernel from kernel 1 on).",
    reference=SOFTMAX_REFERENCE,
    args="x",
    signature="torch::Tensor run(torch::Tensor x)",
    host=one_input_host("torch::empty_like(x)", matrix=True),
    steps=(
        Step("row maxima, row sums, normalisation: three kernels", THREE_KERNELS,
             "auto m = torch::empty({rows}, x.options()), s = torch::empty({rows}, x.options());\n"
             "    row_max<<<(rows + 7) / 8, 256>>>(in, m.data_ptr<float>(), rows, cols);\n"
             "    row_exp_sum<<<(rows + 7) / 8, 256>>>(in, m.data_ptr<float>(), s.data_ptr<float>(), rows, cols);\n"
             "    row_normalize<<<(rows * cols + 255) / 256, 256>>>(in, m.data_ptr<float>(), s.data_ptr<float>(), out,"
             " rows, cols);",
             "row_exp_sum", "fuse-kernel-launches"),
        Step("one kernel, a warp a row", WARP_PER_ROW,
             "softmax_warp_per_row<<<(rows + 7) / 8, 256>>>(in, out, rows, cols);", "softmax_warp_per_row", None),
    ),
)

LADDERS = (PER_ROW, BIAS_GELU, SOFTMAX)
