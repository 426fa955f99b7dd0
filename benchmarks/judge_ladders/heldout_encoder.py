"""Held out (issue 37): GPT-2's encoder (token embedding gathered by index plus position embedding) in bf16, after
karpathy/llm.c (MIT) dev/cuda/encoder_forward.cu kernels 1-3: a thread a token looping over its channels → a
thread a channel of a token (coalesced, and every element its own thread) → eight bf16 a thread in 128-bit loads
and stores (`x128`). 32 sequences of 1024 tokens, 768 channels; a vocabulary of 8192 rather than GPT-2's 50257,
so that nearly every row is gathered: the physical bound counts every input byte as read, and a table mostly
left unread would put it near an honest kernel's time."""

from ladder import BF16_X128, Ladder, Step, reference

REFERENCE = reference(
    forward='return wte[idx] + wpe',
    sizes='B, T, C, V = 32, 1024, 768, 8192',
    inputs='[torch.randint(0, V, (B, T)), torch.randn(V, C, dtype=torch.bfloat16), '
           'torch.randn(T, C, dtype=torch.bfloat16)]',
)

HOST = '''
torch::Tensor run(torch::Tensor idx, torch::Tensor wte, torch::Tensor wpe) {
    const int T = idx.size(1), C = wte.size(1), BT = idx.numel(), n = BT * C;
    TORCH_CHECK(C % 8 == 0, "channels must be a multiple of 8");
    auto y = torch::empty({idx.size(0), T, C}, wte.options());
    const long long* tokens = reinterpret_cast<const long long*>(idx.data_ptr<int64_t>());
    const __nv_bfloat16* tok = reinterpret_cast<const __nv_bfloat16*>(wte.data_ptr<at::BFloat16>());
    const __nv_bfloat16* pos = reinterpret_cast<const __nv_bfloat16*>(wpe.data_ptr<at::BFloat16>());
    __nv_bfloat16* out = reinterpret_cast<__nv_bfloat16*>(y.data_ptr<at::BFloat16>());
    LAUNCH
    return y;
}
'''

TOKEN_PER_THREAD = '''
__global__ void encoder_token_per_thread(const long long* idx, const __nv_bfloat16* wte, const __nv_bfloat16* wpe,
                                         __nv_bfloat16* out, int BT, int T, int C) {
    const int bt = blockIdx.x * blockDim.x + threadIdx.x;  // neighbouring threads walk rows C apart
    if (bt >= BT) return;
    const __nv_bfloat16* w = wte + idx[bt] * C;
    const __nv_bfloat16* p = wpe + (size_t)(bt % T) * C;
    __nv_bfloat16* o = out + (size_t)bt * C;
    for (int c = 0; c < C; ++c) o[c] = __hadd(w[c], p[c]);
}
'''

ELEMENT_PER_THREAD = '''
__global__ void encoder_element_per_thread(const long long* idx, const __nv_bfloat16* wte,
                                           const __nv_bfloat16* wpe, __nv_bfloat16* out, int n, int T, int C) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int bt = i / C, t = bt % T, c = i % C;
    out[i] = __hadd(wte[idx[bt] * C + c], wpe[(size_t)t * C + c]);
}
'''

X128 = BF16_X128 + '''
__global__ void encoder_x128(const long long* idx, const __nv_bfloat16* wte, const __nv_bfloat16* wpe,
                             __nv_bfloat16* out, int n, int T, int C) {
    const int i = (blockIdx.x * blockDim.x + threadIdx.x) * 8;  // C % 8 == 0: eight channels of one token
    if (i >= n) return;
    const int bt = i / C, t = bt % T, c = i % C;
    const bf16x8 w = *reinterpret_cast<const bf16x8*>(wte + idx[bt] * C + c);
    const bf16x8 p = *reinterpret_cast<const bf16x8*>(wpe + (size_t)t * C + c);
    bf16x8 o;
    #pragma unroll
    for (int k = 0; k < 4; ++k) o.h[k] = __hadd2(w.h[k], p.h[k]);
    *reinterpret_cast<bf16x8*>(out + i) = o;
}
'''

LADDER = Ladder(
    key="heldout_encoder",
    title="Token and position embedding ladder (held out)",
    origin="After karpathy/llm.c (MIT), dev/cuda/encoder_forward.cu kernels 1-3.",
    reference=REFERENCE,
    args="idx, wte, wpe",
    signature="torch::Tensor run(torch::Tensor idx, torch::Tensor wte, torch::Tensor wpe)",
    host=HOST,
    includes="#include <cuda_bf16.h>",
    steps=(
        Step("a thread a token, looping over its channels", TOKEN_PER_THREAD,
             "encoder_token_per_thread<<<(BT + 255) / 256, 256>>>(tokens, tok, pos, out, BT, T, C);",
             "encoder_token_per_thread", "coalesce-global-access", also=("increase-parallelism",)),
        Step("a thread a channel of a token", ELEMENT_PER_THREAD,
             "encoder_element_per_thread<<<(n + 255) / 256, 256>>>(tokens, tok, pos, out, n, T, C);",
             "encoder_element_per_thread", "vectorize-memory-access"),
        Step("eight channels a thread in 128-bit loads and stores", X128,
             "encoder_x128<<<(n / 8 + 255) / 256, 256>>>(tokens, tok, pos, out, n, T, C);", "encoder_x128", None),
    ),
)
