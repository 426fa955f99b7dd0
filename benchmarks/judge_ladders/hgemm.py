"""Half-precision GEMM to tensor cores, after NVIDIA/cuda-samples (BSD-3-Clause)
Samples/3_CUDA_Features/cudaTensorCoreGemm (its simple WMMA kernel) and the shared-memory blocking of
siboehm/SGEMM_CUDA (MIT): coalesced FMA → shared-memory blocking → WMMA 16×16×16 with fp32 accumulation. 2048³."""

from ladder import Ladder, Step, reference

REFERENCE = reference(
    forward='return a @ b',
    sizes='N = 2048',
    inputs='[torch.rand(N, N, dtype=torch.float16), torch.rand(N, N, dtype=torch.float16)]',
)

HOST = '''
torch::Tensor run(torch::Tensor a, torch::Tensor b) {
    const int M = a.size(0), K = a.size(1), N = b.size(1);
    auto c = torch::empty({M, N}, a.options());
    const half* A = reinterpret_cast<const half*>(a.data_ptr<at::Half>());
    const half* B = reinterpret_cast<const half*>(b.data_ptr<at::Half>());
    half* C = reinterpret_cast<half*>(c.data_ptr<at::Half>());
    LAUNCH
    return c;
}
'''

COALESCED = '''
__global__ void hgemm_coalesced(int M, int N, int K, const half* A, const half* B, half* C) {
    const int row = blockIdx.y * 32 + threadIdx.y, col = blockIdx.x * 32 + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += __half2float(A[row * K + k]) * __half2float(B[k * N + col]);
    C[row * N + col] = __float2half(acc);
}
'''

SHARED = '''
__global__ void hgemm_shared(int M, int N, int K, const half* A, const half* B, half* C) {
    __shared__ float As[32][32];
    __shared__ float Bs[32][32];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * 32 + ty, col = blockIdx.x * 32 + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += 32) {
        As[ty][tx] = __half2float(A[row * K + k0 + tx]);
        Bs[ty][tx] = __half2float(B[(k0 + ty) * N + col]);
        __syncthreads();
        for (int k = 0; k < 32; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    C[row * N + col] = __float2half(acc);
}
'''

WMMA = '''
__global__ void hgemm_wmma(int M, int N, int K, const half* A, const half* B, half* C) {
    using namespace nvcuda;
    __shared__ __align__(32) float staged[4][16 * 16];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int row = blockIdx.y * 32 + (warp / 2) * 16, col = blockIdx.x * 32 + (warp % 2) * 16;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k = 0; k < K; k += 16) {
        wmma::load_matrix_sync(a, A + row * K + k, K);
        wmma::load_matrix_sync(b, B + k * N + col, N);
        wmma::mma_sync(acc, a, b, acc);
    }
    wmma::store_matrix_sync(staged[warp], acc, 16, wmma::mem_row_major);
    __syncwarp();
    for (int i = lane; i < 256; i += 32) C[(row + i / 16) * N + col + i % 16] = __float2half(staged[warp][i]);
}
'''

LADDER = Ladder(
    key="hgemm",
    title="Half-precision GEMM ladder",
    origin="After NVIDIA/cuda-samples (BSD-3-Clause) cudaTensorCoreGemm and siboehm/SGEMM_CUDA (MIT) kernel 3.",
    reference=REFERENCE,
    args="a, b",
    signature="torch::Tensor run(torch::Tensor a, torch::Tensor b)",
    host=HOST,
    includes="#include <mma.h>",
    steps=(
        Step("coalesced, one result a thread on the CUDA cores", COALESCED,
             "hgemm_coalesced<<<dim3(N / 32, M / 32), dim3(32, 32)>>>(M, N, K, A, B, C);",
             "hgemm_coalesced", "tile-in-shared-memory"),
        Step("shared-memory blocking on the CUDA cores", SHARED,
             "hgemm_shared<<<dim3(N / 32, M / 32), dim3(32, 32)>>>(M, N, K, A, B, C);",
             "hgemm_shared", "use-tensor-cores"),
        Step("WMMA on the tensor cores", WMMA,
             "hgemm_wmma<<<dim3(N / 32, M / 32), 128>>>(M, N, K, A, B, C);", "hgemm_wmma", None),
    ),
)
