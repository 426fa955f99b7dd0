"""Stencils whose neighbours come from a shared-memory tile instead of global memory again and again, after
NVIDIA/cuda-samples (BSD-3-Clause) Samples/5_Domain_Specific/convolutionSeparable (the row filter's tile with
its halo) and the "CUDA by Example" 1-D stencil: a 1-D box filter of radius 64 and a 2-D box blur of radius 4."""

from ladder import Ladder, Step, one_input_host, reference

ONE_D_REFERENCE = reference(
    forward='''
window = 2 * RADIUS + 1
return F.avg_pool1d(x.view(1, 1, -1), window, stride=1, padding=RADIUS, count_include_pad=True).view(-1)
''',
    sizes='N = 1 << 24',
    inputs='[torch.rand(N)]',
    preamble='''
RADIUS = 64
''',
)

ONE_D_HOST = one_input_host("torch::empty_like(x)")

BOX_GLOBAL = '''
__global__ void box1d_global(const float* x, float* y, int n) {
    constexpr int R = 64;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float s = 0.0f;
    for (int k = -R; k <= R; ++k) {
        const int j = i + k;
        if (j >= 0 && j < n) s += x[j];  // each input read by 129 threads, each time from L1/L2
    }
    y[i] = s / (2 * R + 1);
}
'''

BOX_SHARED = '''
__global__ void box1d_shared(const float* x, float* y, int n) {
    constexpr int R = 64, B = 256;
    __shared__ float tile[B + 2 * R];
    const int base = blockIdx.x * B, i = base + threadIdx.x;
    for (int t = threadIdx.x; t < B + 2 * R; t += B) {
        const int j = base - R + t;
        tile[t] = (j >= 0 && j < n) ? x[j] : 0.0f;
    }
    __syncthreads();
    if (i >= n) return;
    float s = 0.0f;
    for (int k = 0; k <= 2 * R; ++k) s += tile[threadIdx.x + k];
    y[i] = s / (2 * R + 1);
}
'''

ONE_D = Ladder(
    key="box1d",
    title="1-D box filter ladder",
    origin="After NVIDIA/cuda-samples (BSD-3-Clause), convolutionSeparable (a tile with its halo in shared memory).",
    reference=ONE_D_REFERENCE,
    args="x",
    signature="torch::Tensor run(torch::Tensor x)",
    host=ONE_D_HOST,
    steps=(
        Step("every neighbour read from global memory", BOX_GLOBAL,
             "box1d_global<<<(n + 255) / 256, 256>>>(in, out, n);", "box1d_global", "tile-in-shared-memory"),
        Step("a tile and its halo in shared memory", BOX_SHARED,
             "box1d_shared<<<(n + 255) / 256, 256>>>(in, out, n);", "box1d_shared", None),
    ),
)

TWO_D_REFERENCE = reference(
    forward='''
window = 2 * RADIUS + 1
return F.avg_pool2d(x[None, None], window, stride=1, padding=RADIUS, count_include_pad=True)[0, 0]
''',
    sizes='N = 4096',
    inputs='[torch.rand(N, N)]',
    preamble='''
RADIUS = 4
''',
)

TWO_D_HOST = one_input_host("torch::empty_like(x)", matrix=True,
                            setup="const dim3 grid((cols + 31) / 32, (rows + 7) / 8), block(32, 8);")

BLUR_GLOBAL = '''
__global__ void blur2d_global(const float* x, float* y, int h, int w) {
    constexpr int R = 4;
    const int c = blockIdx.x * 32 + threadIdx.x, r = blockIdx.y * 8 + threadIdx.y;
    if (r >= h || c >= w) return;
    float s = 0.0f;
    for (int dr = -R; dr <= R; ++dr)
        for (int dc = -R; dc <= R; ++dc) {
            const int rr = r + dr, cc = c + dc;
            if (rr >= 0 && rr < h && cc >= 0 && cc < w) s += x[(size_t)rr * w + cc];
        }
    y[(size_t)r * w + c] = s / ((2 * R + 1) * (2 * R + 1));
}
'''

BLUR_SHARED = '''
__global__ void blur2d_shared(const float* x, float* y, int h, int w) {
    constexpr int R = 4, TW = 32 + 2 * R, TH = 8 + 2 * R;
    __shared__ float tile[TH][TW];
    const int c0 = blockIdx.x * 32 - R, r0 = blockIdx.y * 8 - R;
    for (int t = threadIdx.y * 32 + threadIdx.x; t < TH * TW; t += 256) {
        const int rr = r0 + t / TW, cc = c0 + t % TW;
        tile[t / TW][t % TW] = (rr >= 0 && rr < h && cc >= 0 && cc < w) ? x[(size_t)rr * w + cc] : 0.0f;
    }
    __syncthreads();
    const int c = blockIdx.x * 32 + threadIdx.x, r = blockIdx.y * 8 + threadIdx.y;
    if (r >= h || c >= w) return;
    float s = 0.0f;
    for (int dr = 0; dr <= 2 * R; ++dr)
        for (int dc = 0; dc <= 2 * R; ++dc) s += tile[threadIdx.y + dr][threadIdx.x + dc];
    y[(size_t)r * w + c] = s / ((2 * R + 1) * (2 * R + 1));
}
'''

TWO_D = Ladder(
    key="blur2d",
    title="2-D box blur ladder",
    origin="After NVIDIA/cuda-samples (BSD-3-Clause), convolutionSeparable (a tile with its halo in shared memory).",
    reference=TWO_D_REFERENCE,
    args="x",
    signature="torch::Tensor run(torch::Tensor x)",
    host=TWO_D_HOST,
    steps=(
        Step("every neighbour read from global memory", BLUR_GLOBAL,
             "blur2d_global<<<grid, block>>>(in, out, rows, cols);", "blur2d_global", "tile-in-shared-memory"),
        Step("a tile and its halo in shared memory", BLUR_SHARED,
             "blur2d_shared<<<grid, block>>>(in, out, rows, cols);", "blur2d_shared", None),
    ),
)

LADDERS = (ONE_D, TWO_D)
