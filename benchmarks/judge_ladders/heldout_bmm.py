"""Held out (issue 37): a batched product of small matrices, each batch's matrix a grid's z index, after
siboehm/SGEMM_CUDA (MIT) kernels 2, 3 and 5: a thread an output (coalesced) → 32×32 shared-memory tiles → 64×64
block tiles with 4×4 results a thread in registers. 1024 products of 128 × 128 fp32."""

from ladder import Ladder, Step, reference

REFERENCE = reference(
    forward='return torch.bmm(a, b)',
    sizes='BATCH, M = 1024, 128',
    inputs='[torch.rand(BATCH, M, M), torch.rand(BATCH, M, M)]',
)

HOST = '''
torch::Tensor run(torch::Tensor a, torch::Tensor b) {
    const int batch = a.size(0), M = a.size(1), K = a.size(2), N = b.size(2);
    TORCH_CHECK(M % 64 == 0 && N % 64 == 0 && K % 32 == 0, "sizes must be multiples of the tiles");
    auto c = torch::empty({batch, M, N}, a.options());
    const float* A = a.data_ptr<float>();
    const float* B = b.data_ptr<float>();
    float* C = c.data_ptr<float>();
    LAUNCH
    return c;
}
'''

NAIVE = '''
__global__ void bmm_coalesced(int M, int N, int K, const float* A, const float* B, float* C) {
    const size_t z = blockIdx.z;
    A += z * M * K;
    B += z * K * N;
    C += z * M * N;
    const int row = blockIdx.y * 32 + threadIdx.y, col = blockIdx.x * 32 + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];  // every operand from L1/L2, K times
    C[row * N + col] = acc;
}
'''

SHARED = '''
__global__ void bmm_shared(int M, int N, int K, const float* A, const float* B, float* C) {
    __shared__ float As[32][32];
    __shared__ float Bs[32][32];
    const size_t z = blockIdx.z;
    A += z * M * K;
    B += z * K * N;
    C += z * M * N;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * 32 + ty, col = blockIdx.x * 32 + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += 32) {
        As[ty][tx] = A[row * K + k0 + tx];
        Bs[ty][tx] = B[(k0 + ty) * N + col];
        __syncthreads();
        for (int k = 0; k < 32; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    C[row * N + col] = acc;
}
'''

REGISTER_TILES = '''
__global__ void bmm_register_tiles(int M, int N, int K, const float* A, const float* B, float* C) {
    constexpr int BM = 64, BN = 64, BK = 8, TM = 4, TN = 4;  // 256 threads, 4×4 results each
    __shared__ float As[BM * BK];
    __shared__ float Bs[BK * BN];
    const size_t z = blockIdx.z;
    A += z * M * K + (size_t)blockIdx.y * BM * K;
    B += z * K * N + blockIdx.x * BN;
    C += z * M * N + (size_t)blockIdx.y * BM * N + blockIdx.x * BN;
    const int tr = threadIdx.x / (BN / TN), tc = threadIdx.x % (BN / TN);
    float acc[TM][TN] = {};
    float a[TM], b[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int l = threadIdx.x; l < BM * BK; l += 256) As[l] = A[(l / BK) * K + k0 + l % BK];
        for (int l = threadIdx.x; l < BK * BN; l += 256) Bs[l] = B[(k0 + l / BN) * N + l % BN];
        __syncthreads();
        #pragma unroll
        for (int k = 0; k < BK; ++k) {
            #pragma unroll
            for (int i = 0; i < TM; ++i) a[i] = As[(tr * TM + i) * BK + k];
            #pragma unroll
            for (int j = 0; j < TN; ++j) b[j] = Bs[k * BN + tc * TN + j];
            #pragma unroll
            for (int i = 0; i < TM; ++i)
                #pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
    #pragma unroll
    for (int i = 0; i < TM; ++i)
        #pragma unroll
        for (int j = 0; j < TN; ++j) C[(tr * TM + i) * N + tc * TN + j] = acc[i][j];
}
'''

LADDER = Ladder(
    key="heldout_bmm",
    title="Batched small GEMM ladder (held out)",
    origin="After siboehm/SGEMM_CUDA (MIT), kernels 2, 3 and 5, a batch a grid z index.",
    reference=REFERENCE,
    args="a, b",
    signature="torch::Tensor run(torch::Tensor a, torch::Tensor b)",
    host=HOST,
    steps=(
        Step("a thread an output, coalesced", NAIVE,
             "bmm_coalesced<<<dim3(N / 32, M / 32, batch), dim3(32, 32)>>>(M, N, K, A, B, C);", "bmm_coalesced",
             "tile-in-shared-memory"),
        Step("32×32 shared-memory tiles", SHARED,
             "bmm_shared<<<dim3(N / 32, M / 32, batch), dim3(32, 32)>>>(M, N, K, A, B, C);", "bmm_shared",
             "tile-in-shared-memory"),
        Step("64×64 block tiles, 4×4 results a thread in registers", REGISTER_TILES,
             "bmm_register_tiles<<<dim3(N / 64, M / 64, batch), 256>>>(M, N, K, A, B, C);", "bmm_register_tiles",
             None),
    ),
)
