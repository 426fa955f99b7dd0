"""GEMM 4096 with the honest adv_gemm build (tiled, and tiled with a bias) (../README.md, Layout)."""

BASE = "fused_chain"
EDITS = [
    (8, 8, '    """C = A @ B for square float32 matrices of 4096 (KernelBench level 1, problem 1)."""\n'),
    (13, 22, r'''    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)
'''),
    (25, 26, 'N = 4096\n'),
    (30, 30, '    return [torch.rand(N, N), torch.rand(N, N)]\n'),
    (39, 63, r'''
#define TILE_M 64
#define TILE_N 64
#define TILE_K 16

// C = A @ B (+ bias), row-major: A is M x K, B is K x N. A 64 x 64 tile of C per block of 256 threads, each thread
// 4 x 4 outputs (rows ty + 16 i, columns tx + 16 j), the K dimension staged through shared memory 16 at a time.
__global__ void gemm_tiled_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                  const float* __restrict__ bias, float* __restrict__ C, int M, int N, int K) {
    __shared__ float As[TILE_K][TILE_M + 1];
    __shared__ float Bs[TILE_K][TILE_N];
    const int tx = threadIdx.x % 16;
    const int ty = threadIdx.x / 16;
    const int row0 = blockIdx.y * TILE_M;
    const int col0 = blockIdx.x * TILE_N;
    float acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            acc[i][j] = 0.0f;
        }
    }
    for (int k0 = 0; k0 < K; k0 += TILE_K) {
        for (int e = threadIdx.x; e < TILE_M * TILE_K; e += 256) {
            int r = e / TILE_K;
            int c = e % TILE_K;
            int gr = row0 + r;
            int gc = k0 + c;
            As[c][r] = (gr < M && gc < K) ? A[(long)gr * K + gc] : 0.0f;
        }
        for (int e = threadIdx.x; e < TILE_K * TILE_N; e += 256) {
            int r = e / TILE_N;
            int c = e % TILE_N;
            int gr = k0 + r;
            int gc = col0 + c;
            Bs[r][c] = (gr < K && gc < N) ? B[(long)gr * N + gc] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE_K; ++k) {
            float a[4];
            float b[4];
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                a[i] = As[k][ty + 16 * i];
            }
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                b[j] = Bs[k][tx + 16 * j];
            }
#pragma unroll
            for (int i = 0; i < 4; ++i) {
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
                }
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        int r = row0 + ty + 16 * i;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            int c = col0 + tx + 16 * j;
            if (r < M && c < N) {
                C[(long)r * N + c] = acc[i][j] + (bias != nullptr ? bias[c] : 0.0f);
            }
        }
'''),
    (67, 72, r'''static torch::Tensor run_gemm(const torch::Tensor& A, const torch::Tensor& B, const float* bias) {
    TORCH_CHECK(A.is_cuda() && B.is_cuda(), "A and B must be CUDA tensors");
    TORCH_CHECK(A.scalar_type() == torch::kFloat && B.scalar_type() == torch::kFloat, "A and B must be float32");
    TORCH_CHECK(A.dim() == 2 && B.dim() == 2 && A.size(1) == B.size(0), "A (M x K) and B (K x N) expected");
    auto a = A.contiguous();
    auto b = B.contiguous();
    int M = (int)a.size(0);
    int K = (int)a.size(1);
    int N = (int)b.size(1);
    auto C = torch::empty({M, N}, a.options());
    dim3 grid((N + TILE_N - 1) / TILE_N, (M + TILE_M - 1) / TILE_M);
    gemm_tiled_kernel<<<grid, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        a.data_ptr<float>(), b.data_ptr<float>(), bias, C.data_ptr<float>(), M, N, K);
    return C;
'''),
    (75, 84, r'''torch::Tensor matmul_tiled(torch::Tensor A, torch::Tensor B) {
    return run_gemm(A, B, nullptr);
'''),
    (87, 105, r'''torch::Tensor matmul_tiled_bias(torch::Tensor A, torch::Tensor B, torch::Tensor bias) {
    TORCH_CHECK(bias.is_cuda() && bias.scalar_type() == torch::kFloat && bias.is_contiguous() &&
                bias.numel() == B.size(1), "bias must be a contiguous float32 CUDA vector of N elements");
    return run_gemm(A, B, bias.data_ptr<float>());
'''),
    (109, 109, r'''cpp_source = r"""torch::Tensor matmul_tiled(torch::Tensor A, torch::Tensor B);
torch::Tensor matmul_tiled_bias(torch::Tensor A, torch::Tensor B, torch::Tensor bias);
'''),
    (113, 113, '    name="adv_gemm",\n'),
    (116, 116, '    functions=["matmul_tiled", "matmul_tiled_bias"],\n'),
    (126, 127, r'''    def forward(self, A, B):
        return ext.matmul_tiled(A, B)
'''),
]
