"""Matrix transpose, after NVIDIA/cuda-samples (BSD-3-Clause) Samples/6_Performance/transpose (Greg Ruetsch and
Paulius Micikevicius, "Optimizing Matrix Transpose in CUDA"): naive → coalesced through a shared tile → the tile
padded by one column. 32×32 tiles, 32×8 threads, 8192² fp32."""

from ladder import Ladder, Step, one_input_host, reference

REFERENCE = reference(
    forward='return x.t().contiguous()',
    sizes='N = 8192',
    inputs='[torch.randn(N, N)]',
)

HOST = one_input_host("torch::empty({x.size(1), x.size(0)}, x.options())", matrix=True,
                      setup="const dim3 grid(cols / 32, rows / 32), block(32, 8);")

NAIVE = '''
__global__ void transpose_naive(const float* in, float* out, int rows, int cols) {
    const int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) out[x * rows + y + j] = in[(y + j) * cols + x];  // stores stride by rows
}
'''


def tiled(name: str, width: int) -> str:
    return f'''
__global__ void {name}(const float* in, float* out, int rows, int cols) {{
    __shared__ float tile[32][{width}];
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8) out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}}
'''


LADDER = Ladder(
    key="transpose",
    title="Matrix transpose ladder",
    origin="After NVIDIA/cuda-samples (BSD-3-Clause), transpose.cu (naive, coalesced, no bank conflicts).",
    reference=REFERENCE,
    args="x",
    signature="torch::Tensor run(torch::Tensor x)",
    host=HOST,
    steps=(
        Step("naive: coalesced reads, strided writes", NAIVE,
             "transpose_naive<<<grid, block>>>(in, out, rows, cols);", "transpose_naive", "coalesce-global-access"),
        Step("coalesced through a 32×32 shared tile", tiled("transpose_tiled", 32),
             "transpose_tiled<<<grid, block>>>(in, out, rows, cols);", "transpose_tiled", "pad-shared-memory"),
        Step("tile padded to 32×33: no bank conflicts", tiled("transpose_padded", 33),
             "transpose_padded<<<grid, block>>>(in, out, rows, cols);", "transpose_padded", None),
    ),
)
