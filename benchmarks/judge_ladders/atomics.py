"""Atomics reduced in the warp and the block first, after NVIDIA's "CUDA Pro Tip: Optimized Filtering with
Warp-Aggregated Atomics" and "Faster Parallel Reductions on Kepler" (developer blog), and the histogram sample of
NVIDIA/cuda-samples (BSD-3-Clause, Samples/2_Concepts_and_Techniques/histogram: per-block sub-histograms in
shared memory). Three ladders of two steps: a sum into one word, row sums into one word per row
(`out[blockIdx.y]`, issue 37's miss), and a 256-bin histogram."""

from ladder import BLOCK_ADD, Ladder, Step, one_input_host, reference

# small whole numbers, so that every partial sum is exact in float32 whatever order the atomics land in (with
# torch.rand over 1 << 24 elements the one-word sum drifted past the 1e-4 tolerance on the H200: the step failed)
SUM_REFERENCE = reference(
    forward='return x.sum()',
    sizes='N = 1 << 22',
    inputs='[torch.randint(0, 4, (N,)).float()]',
)

SUM_HOST = one_input_host("torch::zeros({}, x.options())")

SUM_PER_THREAD = '''
__global__ void sum_atomic_per_thread(const float* in, float* total, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(total, in[i]);  // every thread of the grid on one word
}
'''

SUM_PER_BLOCK = BLOCK_ADD + '''
__global__ void sum_atomic_per_block(const float* in, float* total, int n) {
    float v = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) v += in[i];
    v = block_add(v);
    if (threadIdx.x == 0) atomicAdd(total, v);
}
'''

SUM = Ladder(
    key="atomic_sum",
    title="Sum into one word ladder",
    origin="After NVIDIA's developer blog, 'Faster Parallel Reductions on Kepler'.",
    reference=SUM_REFERENCE,
    args="x",
    signature="torch::Tensor run(torch::Tensor x)",
    host=SUM_HOST,
    steps=(
        Step("an atomic a thread on one word", SUM_PER_THREAD,
             "sum_atomic_per_thread<<<(n + 255) / 256, 256>>>(in, out, n);", "sum_atomic_per_thread",
             "use-warp-shuffles"),
        Step("shuffles and shared memory first, an atomic a block", SUM_PER_BLOCK,
             "sum_atomic_per_block<<<1056, 256>>>(in, out, n);", "sum_atomic_per_block", None),
    ),
)

ROWS_REFERENCE = reference(
    forward='return x.sum(dim=1)',
    sizes='ROWS, COLS = 2048, 8192',
    inputs='[torch.rand(ROWS, COLS)]',
)

ROWS_HOST = one_input_host("torch::zeros({rows}, x.options())", matrix=True,
                           setup="const dim3 grid((cols + 255) / 256, rows);")

ROWS_PER_THREAD = '''
__global__ void row_sum_atomic_per_thread(const float* x, float* out, int cols) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < cols) atomicAdd(&out[blockIdx.y], x[(size_t)blockIdx.y * cols + c]);  // a block's threads, one word
}
'''

ROWS_PER_BLOCK = BLOCK_ADD + '''
__global__ void row_sum_atomic_per_block(const float* x, float* out, int cols) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    float v = block_add(c < cols ? x[(size_t)blockIdx.y * cols + c] : 0.0f);
    if (threadIdx.x == 0) atomicAdd(&out[blockIdx.y], v);
}
'''

ROWS = Ladder(
    key="atomic_rows",
    title="Row sums into one word a row ladder",
    origin="After NVIDIA's developer blog, 'Faster Parallel Reductions on Kepler' (issue 37's `out[blockIdx.y]`).",
    reference=ROWS_REFERENCE,
    args="x",
    signature="torch::Tensor run(torch::Tensor x)",
    host=ROWS_HOST,
    steps=(
        Step("an atomic a thread on its row's word", ROWS_PER_THREAD,
             "row_sum_atomic_per_thread<<<grid, 256>>>(in, out, cols);", "row_sum_atomic_per_thread",
             "use-warp-shuffles"),
        Step("the block's sum first, an atomic a block", ROWS_PER_BLOCK,
             "row_sum_atomic_per_block<<<grid, 256>>>(in, out, cols);", "row_sum_atomic_per_block", None),
    ),
)

HIST_REFERENCE = reference(
    forward='return torch.bincount(x, minlength=256)',
    sizes='N = 1 << 24',
    inputs='[torch.randint(0, 256, (N,))]',
)

HIST_HOST = '''
torch::Tensor run(torch::Tensor x) {
    const int n = x.numel();
    auto bins = torch::zeros({256}, x.options());
    const long long* keys = reinterpret_cast<const long long*>(x.data_ptr<int64_t>());
    unsigned long long* out = reinterpret_cast<unsigned long long*>(bins.data_ptr<int64_t>());
    LAUNCH
    return bins;
}
'''

HIST_GLOBAL = '''
__global__ void histogram_global(const long long* keys, unsigned long long* bins, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[keys[i]], 1ULL);
}
'''

HIST_SHARED = '''
__global__ void histogram_shared(const long long* keys, unsigned long long* bins, int n) {
    __shared__ unsigned int local[256];
    local[threadIdx.x] = 0;  // blockDim.x == 256
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&local[keys[i]], 1u);
    __syncthreads();
    if (local[threadIdx.x]) atomicAdd(&bins[threadIdx.x], (unsigned long long)local[threadIdx.x]);
}
'''

HISTOGRAM = Ladder(
    key="histogram",
    title="256-bin histogram ladder",
    origin="After NVIDIA/cuda-samples (BSD-3-Clause), histogram (per-block sub-histograms in shared memory).",
    reference=HIST_REFERENCE,
    args="x",
    signature="torch::Tensor run(torch::Tensor x)",
    host=HIST_HOST,
    steps=(
        Step("a global atomic an element", HIST_GLOBAL,
             "histogram_global<<<(n + 255) / 256, 256>>>(keys, out, n);", "histogram_global", "use-warp-shuffles"),
        Step("a shared sub-histogram a block, then one atomic a bin", HIST_SHARED,
             "histogram_shared<<<1056, 256>>>(keys, out, n);", "histogram_shared", None),
    ),
)

LADDERS = (SUM, ROWS, HISTOGRAM)
