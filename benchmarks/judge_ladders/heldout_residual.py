"""Held out (issue 37): the bias-add-residual of a transformer block in bf16, as NVIDIA/Megatron-LM (BSD-3-Clause)
fuses it (`bias_dropout_add_fused`, here without dropout: `residual + (x + bias)`), then with karpathy/llm.c's
(MIT) 128-bit `x128` loads and stores (dev/cuda/residual_forward.cu kernel 2): the bias added, then the residual
in place, in two kernels → one kernel → eight bf16 a thread. 8192 × 4096 bf16."""

from ladder import BF16_X128, Ladder, Step, reference

REFERENCE = reference(
    forward='return residual + (x + bias)',
    sizes='ROWS, COLS = 8192, 4096',
    inputs='[torch.randn(ROWS, COLS, dtype=torch.bfloat16), torch.randn(COLS, dtype=torch.bfloat16), '
           'torch.randn(ROWS, COLS, dtype=torch.bfloat16)]',
)

HOST = '''
torch::Tensor run(torch::Tensor x, torch::Tensor bias, torch::Tensor residual) {
    const int cols = x.size(1), n = x.numel();
    TORCH_CHECK(cols % 8 == 0, "cols must be a multiple of 8");
    auto y = torch::empty_like(x);
    const __nv_bfloat16* in = reinterpret_cast<const __nv_bfloat16*>(x.data_ptr<at::BFloat16>());
    const __nv_bfloat16* b = reinterpret_cast<const __nv_bfloat16*>(bias.data_ptr<at::BFloat16>());
    const __nv_bfloat16* r = reinterpret_cast<const __nv_bfloat16*>(residual.data_ptr<at::BFloat16>());
    __nv_bfloat16* out = reinterpret_cast<__nv_bfloat16*>(y.data_ptr<at::BFloat16>());
    LAUNCH
    return y;
}
'''

# each sum rounded to bf16 as torch rounds `x + bias` before adding the residual
TWO_KERNELS = '''
__global__ void add_bias_bf16(const __nv_bfloat16* x, const __nv_bfloat16* bias, __nv_bfloat16* y, int n, int cols) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __hadd(x[i], bias[i % cols]);
}

__global__ void add_residual_bf16(__nv_bfloat16* y, const __nv_bfloat16* residual, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __hadd(residual[i], y[i]);
}
'''

FUSED = '''
__global__ void bias_residual_bf16(const __nv_bfloat16* x, const __nv_bfloat16* bias,
                                   const __nv_bfloat16* residual, __nv_bfloat16* y, int n, int cols) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __hadd(residual[i], __hadd(x[i], bias[i % cols]));
}
'''

X128 = BF16_X128 + '''
__global__ void bias_residual_x128(const __nv_bfloat16* x, const __nv_bfloat16* bias,
                                   const __nv_bfloat16* residual, __nv_bfloat16* y, int n, int cols) {
    const int i = (blockIdx.x * blockDim.x + threadIdx.x) * 8;  // n % 8 == 0 and cols % 8 == 0
    if (i >= n) return;
    const bf16x8 a = *reinterpret_cast<const bf16x8*>(x + i);
    const bf16x8 b = *reinterpret_cast<const bf16x8*>(bias + i % cols);
    const bf16x8 r = *reinterpret_cast<const bf16x8*>(residual + i);
    bf16x8 o;
    #pragma unroll
    for (int k = 0; k < 4; ++k) o.h[k] = __hadd2(r.h[k], __hadd2(a.h[k], b.h[k]));
    *reinterpret_cast<bf16x8*>(y + i) = o;
}
'''

LADDER = Ladder(
    key="heldout_residual",
    title="Bias and residual add ladder (held out)",
    origin="After NVIDIA/Megatron-LM (BSD-3-Clause), bias_dropout_add_fused (no dropout), and karpathy/llm.c (MIT), "
           "dev/cuda/residual_forward.cu (x128 loads).",
    reference=REFERENCE,
    args="x, bias, residual",
    signature="torch::Tensor run(torch::Tensor x, torch::Tensor bias, torch::Tensor residual)",
    host=HOST,
    includes="#include <cuda_bf16.h>",
    steps=(
        Step("bias, then the residual in place: two kernels", TWO_KERNELS,
             "add_bias_bf16<<<(n + 255) / 256, 256>>>(in, b, out, n, cols);\n"
             "    add_residual_bf16<<<(n + 255) / 256, 256>>>(out, r, n);",
             "add_bias_bf16", "fuse-kernel-launches"),
        Step("bias and residual in one kernel, a bf16 a thread", FUSED,
             "bias_residual_bf16<<<(n + 255) / 256, 256>>>(in, b, r, out, n, cols);", "bias_residual_bf16",
             "vectorize-memory-access"),
        Step("eight bf16 a thread in 128-bit loads and stores", X128,
             "bias_residual_x128<<<(n / 8 + 255) / 256, 256>>>(in, b, r, out, n, cols);", "bias_residual_x128",
             None),
    ),
)
