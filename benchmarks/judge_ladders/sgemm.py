"""SGEMM, after siboehm/SGEMM_CUDA (MIT), kernels 1-6: naive → coalesced → shared-memory blocking → 1-D and
2-D register blocktiling → vectorized. Sizes are multiples of every tile (2048³)."""

from ladder import Ladder, Step, reference

REFERENCE = reference(
    forward='return a @ b',
    sizes='N = 2048',
    inputs='[torch.rand(N, N), torch.rand(N, N)]',
)

HOST = '''
torch::Tensor run(torch::Tensor a, torch::Tensor b) {
    const int M = a.size(0), K = a.size(1), N = b.size(1);
    auto c = torch::empty({M, N}, a.options());
    const float* A = a.data_ptr<float>();
    const float* B = b.data_ptr<float>();
    float* C = c.data_ptr<float>();
    LAUNCH
    return c;
}
'''

NAIVE = '''
__global__ void sgemm_naive(int M, int N, int K, const float* A, const float* B, float* C) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;  // threadIdx.x walks rows: loads stride by K
    const int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
        C[row * N + col] = acc;
    }
}
'''

COALESCED = '''
__global__ void sgemm_coalesced(int M, int N, int K, const float* A, const float* B, float* C) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;  // threadIdx.x walks columns: B and C coalesce
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
        C[row * N + col] = acc;
    }
}
'''

SHARED = '''
__global__ void sgemm_shared(int M, int N, int K, const float* A, const float* B, float* C) {
    __shared__ float As[32][32];
    __shared__ float Bs[32][32];
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

BLOCKTILE_1D = '''
__global__ void sgemm_blocktile_1d(int M, int N, int K, const float* A, const float* B, float* C) {
    constexpr int BM = 64, BN = 64, BK = 8, TM = 8;  // 512 threads, each 8 outputs of one column
    __shared__ float As[BM * BK];
    __shared__ float Bs[BK * BN];
    const int tcol = threadIdx.x % BN, trow = threadIdx.x / BN;
    const int aCol = threadIdx.x % BK, aRow = threadIdx.x / BK;
    const int bCol = threadIdx.x % BN, bRow = threadIdx.x / BN;
    A += blockIdx.y * BM * K;
    B += blockIdx.x * BN;
    C += blockIdx.y * BM * N + blockIdx.x * BN;
    float acc[TM] = {0.0f};
    for (int k0 = 0; k0 < K; k0 += BK) {
        As[aRow * BK + aCol] = A[aRow * K + aCol];
        Bs[bRow * BN + bCol] = B[bRow * N + bCol];
        __syncthreads();
        A += BK;
        B += BK * N;
        #pragma unroll
        for (int k = 0; k < BK; ++k) {
            const float b = Bs[k * BN + tcol];
            #pragma unroll
            for (int m = 0; m < TM; ++m) acc[m] += As[(trow * TM + m) * BK + k] * b;
        }
        __syncthreads();
    }
    #pragma unroll
    for (int m = 0; m < TM; ++m) C[(trow * TM + m) * N + tcol] = acc[m];
}
'''

BLOCKTILE_2D = '''
__global__ void sgemm_blocktile_2d(int M, int N, int K, const float* A, const float* B, float* C) {
    constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;  // 256 threads, each an 8×8 tile
    __shared__ float As[BM * BK];
    __shared__ float Bs[BK * BN];
    const int tcol = threadIdx.x % (BN / TN), trow = threadIdx.x / (BN / TN);
    A += blockIdx.y * BM * K;
    B += blockIdx.x * BN;
    C += blockIdx.y * BM * N + blockIdx.x * BN;
    float acc[TM * TN] = {0.0f};
    float regM[TM], regN[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int i = threadIdx.x; i < BM * BK; i += 256) As[i] = A[(i / BK) * K + i % BK];
        for (int i = threadIdx.x; i < BK * BN; i += 256) Bs[i] = B[(i / BN) * N + i % BN];
        __syncthreads();
        A += BK;
        B += BK * N;
        #pragma unroll
        for (int k = 0; k < BK; ++k) {
            #pragma unroll
            for (int m = 0; m < TM; ++m) regM[m] = As[(trow * TM + m) * BK + k];
            #pragma unroll
            for (int n = 0; n < TN; ++n) regN[n] = Bs[k * BN + tcol * TN + n];
            #pragma unroll
            for (int m = 0; m < TM; ++m)
                #pragma unroll
                for (int n = 0; n < TN; ++n) acc[m * TN + n] += regM[m] * regN[n];
        }
        __syncthreads();
    }
    #pragma unroll
    for (int m = 0; m < TM; ++m)
        #pragma unroll
        for (int n = 0; n < TN; ++n) C[(trow * TM + m) * N + tcol * TN + n] = acc[m * TN + n];
}
'''

VECTORIZED = '''
__global__ void sgemm_vectorized(int M, int N, int K, const float* A, const float* B, float* C) {
    constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
    __shared__ __align__(16) float As[BK * BM];  // transposed: As[k][m], so a thread's 8 rows are one 32-byte read
    __shared__ __align__(16) float Bs[BK * BN];
    const int tcol = threadIdx.x % (BN / TN), trow = threadIdx.x / (BN / TN);
    const int aRow = threadIdx.x / 2, aCol = (threadIdx.x % 2) * 4;
    const int bRow = threadIdx.x / 32, bCol = (threadIdx.x % 32) * 4;
    A += blockIdx.y * BM * K;
    B += blockIdx.x * BN;
    C += blockIdx.y * BM * N + blockIdx.x * BN;
    float acc[TM * TN] = {0.0f};
    float regM[TM], regN[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
        const float4 a4 = *reinterpret_cast<const float4*>(&A[aRow * K + aCol]);
        As[(aCol + 0) * BM + aRow] = a4.x;
        As[(aCol + 1) * BM + aRow] = a4.y;
        As[(aCol + 2) * BM + aRow] = a4.z;
        As[(aCol + 3) * BM + aRow] = a4.w;
        *reinterpret_cast<float4*>(&Bs[bRow * BN + bCol]) = *reinterpret_cast<const float4*>(&B[bRow * N + bCol]);
        __syncthreads();
        A += BK;
        B += BK * N;
        #pragma unroll
        for (int k = 0; k < BK; ++k) {
            #pragma unroll
            for (int m = 0; m < TM; m += 4) {
                const float4 v = *reinterpret_cast<const float4*>(&As[k * BM + trow * TM + m]);
                regM[m] = v.x; regM[m + 1] = v.y; regM[m + 2] = v.z; regM[m + 3] = v.w;
            }
            #pragma unroll
            for (int n = 0; n < TN; n += 4) {
                const float4 v = *reinterpret_cast<const float4*>(&Bs[k * BN + tcol * TN + n]);
                regN[n] = v.x; regN[n + 1] = v.y; regN[n + 2] = v.z; regN[n + 3] = v.w;
            }
            #pragma unroll
            for (int m = 0; m < TM; ++m)
                #pragma unroll
                for (int n = 0; n < TN; ++n) acc[m * TN + n] += regM[m] * regN[n];
        }
        __syncthreads();
    }
    #pragma unroll
    for (int m = 0; m < TM; ++m)
        #pragma unroll
        for (int n = 0; n < TN; n += 4)
            *reinterpret_cast<float4*>(&C[(trow * TM + m) * N + tcol * TN + n]) =
                make_float4(acc[m * TN + n], acc[m * TN + n + 1], acc[m * TN + n + 2], acc[m * TN + n + 3]);
}
'''

LADDER = Ladder(
    key="sgemm",
    title="SGEMM ladder",
    origin="After siboehm/SGEMM_CUDA (MIT), src/kernels/1-6.",
    reference=REFERENCE,
    args="a, b",
    signature="torch::Tensor run(torch::Tensor a, torch::Tensor b)",
    host=HOST,
    steps=(
        Step("naive, threadIdx.x along rows", NAIVE,
             "sgemm_naive<<<dim3(M / 32, N / 32), dim3(32, 32)>>>(M, N, K, A, B, C);",
             "sgemm_naive", "coalesce-global-access"),
        Step("global memory coalescing", COALESCED,
             "sgemm_coalesced<<<dim3(N / 32, M / 32), dim3(32, 32)>>>(M, N, K, A, B, C);",
             "sgemm_coalesced", "tile-in-shared-memory"),
        Step("shared-memory cache blocking", SHARED,
             "sgemm_shared<<<dim3(N / 32, M / 32), dim3(32, 32)>>>(M, N, K, A, B, C);",
             "sgemm_shared", "tile-in-shared-memory"),
        Step("1-D blocktiling (8 results a thread)", BLOCKTILE_1D,
             "sgemm_blocktile_1d<<<dim3(N / 64, M / 64), 512>>>(M, N, K, A, B, C);",
             "sgemm_blocktile_1d", "tile-in-shared-memory"),
        Step("2-D blocktiling (8×8 results a thread)", BLOCKTILE_2D,
             "sgemm_blocktile_2d<<<dim3(N / 128, M / 128), 256>>>(M, N, K, A, B, C);",
             "sgemm_blocktile_2d", "vectorize-memory-access"),
        Step("vectorized loads, A transposed in shared memory", VECTORIZED,
             "sgemm_vectorized<<<dim3(N / 128, M / 128), 256>>>(M, N, K, A, B, C);",
             "sgemm_vectorized", None),
    ),
)
