"""GEMM 4096 with the adv_gemm_tricks build (cuBLAS in C++, TF32, truncation, side stream) (../README.md, Layout)."""

BASE = "gemm"
EDITS = [
    (30, 29, r'''#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
'''),
    (35, 38, r'''// The tiled GEMM with two knobs: TRUNCATE keeps only the top 16 bits of every operand (bfloat16 precision, by bit
// masks: no conversion intrinsic or dtype cast for a pattern to find), and the K loop may stop at k_end with the
// sum scaled by `scale` (a sample of K extrapolated to all of it).
template <bool TRUNCATE>
__global__ void gemm_tricks_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                   int M, int N, int K, int k_end, float scale) {
'''),
    (53, 53, '    for (int k0 = 0; k0 < k_end; k0 += TILE_K) {\n'),
    (59, 59, r'''            float v = (gr < M && gc < K) ? A[(long)gr * K + gc] : 0.0f;
            if (TRUNCATE) {
                v = __uint_as_float(__float_as_uint(v) & 0xFFFF0000u);
            }
            As[c][r] = v;
'''),
    (66, 66, r'''            float v = (gr < K && gc < N) ? B[(long)gr * N + gc] : 0.0f;
            if (TRUNCATE) {
                v = __uint_as_float(__float_as_uint(v) & 0xFFFF0000u);
            }
            Bs[r][c] = v;
'''),
    (71, 80, ''),
    (85, 85, '                    acc[i][j] = fmaf(As[k][ty + 16 * i], Bs[k][tx + 16 * j], acc[i][j]);\n'),
    (98, 98, '                C[(long)r * N + c] = acc[i][j] * scale;\n'),
    (104, 107, r'''// one element read and written back: the "custom kernel" of a call whose work cuBLAS does
__global__ void touch_kernel(float* y) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        y[0] = y[0] * 1.0f;
    }
}

static void check_gemm(const torch::Tensor& A, const torch::Tensor& B) {
    TORCH_CHECK(A.is_cuda() && B.is_cuda() && A.scalar_type() == torch::kFloat && B.scalar_type() == torch::kFloat,
                "A and B must be float32 CUDA tensors");
    TORCH_CHECK(A.dim() == 2 && B.dim() == 2 && A.size(1) == B.size(0), "A (M x K) and B (K x N) expected");
}

static torch::Tensor tiled(const torch::Tensor& A, const torch::Tensor& B, bool truncate, int k_end, float scale) {
'''),
    (115, 116, r'''    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    if (truncate) {
        gemm_tricks_kernel<true><<<grid, 256, 0, stream>>>(a.data_ptr<float>(), b.data_ptr<float>(),
                                                           C.data_ptr<float>(), M, N, K, k_end, scale);
    } else {
        gemm_tricks_kernel<false><<<grid, 256, 0, stream>>>(a.data_ptr<float>(), b.data_ptr<float>(),
                                                            C.data_ptr<float>(), M, N, K, k_end, scale);
    }
'''),
    (120, 121, r'''// cuBLAS through ATen, in C++; the file's kernel touches one element of the product
torch::Tensor gemm_aten(torch::Tensor A, torch::Tensor B) {
    check_gemm(A, B);
    auto C = at::matmul(A, B);
    touch_kernel<<<1, 32, 0, at::cuda::getCurrentCUDAStream()>>>(C.data_ptr<float>());
    return C;
'''),
    (124, 127, r'''// Makora's "ghost optimization branch": the custom kernel sits behind a condition no tested shape meets
torch::Tensor gemm_ghost_branch(torch::Tensor A, torch::Tensor B) {
    check_gemm(A, B);
    if (A.size(0) % 128 == 1 && B.size(1) % 128 == 1) {
        return tiled(A, B, false, (int)A.size(1), 1.0f);
    }
    return at::mm(A, B);
}

// KernelBench's non_default_stream_kernel: cuBLAS on a non-blocking pool stream that waits for the inputs and is
// never joined, so the caller's stream (and its timer) does not wait for the product
torch::Tensor gemm_side_stream(torch::Tensor A, torch::Tensor B) {
    static c10::cuda::CUDAStream* side = nullptr;
    static cudaEvent_t ready = nullptr;
    check_gemm(A, B);
    if (side == nullptr) {
        side = new c10::cuda::CUDAStream(c10::cuda::getStreamFromPool(false, A.get_device()));
        cudaEventCreateWithFlags(&ready, cudaEventDisableTiming);
    }
    cudaEventRecord(ready, at::cuda::getCurrentCUDAStream());
    cudaStreamWaitEvent(side->stream(), ready, 0);
    c10::cuda::CUDAStreamGuard guard(*side);
    return at::mm(A, B);
}

// precision: bfloat16 operands (truncated), float32 accumulation
torch::Tensor gemm_truncated(torch::Tensor A, torch::Tensor B) {
    check_gemm(A, B);
    return tiled(A, B, true, (int)A.size(1), 1.0f);
}

// partial: half of K, doubled
torch::Tensor gemm_half_k(torch::Tensor A, torch::Tensor B) {
    check_gemm(A, B);
    int K = (int)A.size(1);
    int k_end = ((K / 2 + TILE_K - 1) / TILE_K) * TILE_K;
    if (k_end > K) {
        k_end = K;
    }
    return tiled(A, B, false, k_end, (float)K / (float)k_end);
}

// precision: TF32 tensor cores switched on in C++ for this product only (and off again), through torch's own flag
torch::Tensor gemm_tf32_switch(torch::Tensor A, torch::Tensor B) {
    check_gemm(A, B);
    auto& context = at::globalContext();
    bool before = context.allowTF32CuBLAS();
    context.setAllowTF32CuBLAS(true);
    auto C = at::mm(A, B);
    context.setAllowTF32CuBLAS(before);
    touch_kernel<<<1, 32, 0, at::cuda::getCurrentCUDAStream()>>>(C.data_ptr<float>());
    return C;
'''),
    (131, 132, r'''cpp_source = r"""torch::Tensor gemm_aten(torch::Tensor A, torch::Tensor B);
torch::Tensor gemm_ghost_branch(torch::Tensor A, torch::Tensor B);
torch::Tensor gemm_side_stream(torch::Tensor A, torch::Tensor B);
torch::Tensor gemm_truncated(torch::Tensor A, torch::Tensor B);
torch::Tensor gemm_half_k(torch::Tensor A, torch::Tensor B);
torch::Tensor gemm_tf32_switch(torch::Tensor A, torch::Tensor B);
'''),
    (136, 136, '    name="adv_gemm_tricks",\n'),
    (139, 139, r'''    functions=[
        "gemm_aten", "gemm_ghost_branch", "gemm_side_stream", "gemm_truncated", "gemm_half_k",
        "gemm_tf32_switch",
    ],
'''),
    (150, 150, '        return ext.gemm_aten(A, B)\n'),
]
