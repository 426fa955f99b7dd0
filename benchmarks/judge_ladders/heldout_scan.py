"""Held out (issue 37): a row-wise inclusive prefix sum, a block of 1024 threads a row of 1024: the naive
double-buffered Hillis-Steele scan in shared memory of Harris, Sengupta and Owens, "Parallel Prefix Sum (Scan)
with CUDA" (GPU Gems 3, chapter 39, example 39-1, inclusive) → the warp-shuffle scan of NVIDIA/cuda-samples
(BSD-3-Clause) Samples/2_Concepts_and_Techniques/shfl_scan (each warp scanned with __shfl_up_sync, the warps'
totals scanned by one warp). 32768 rows of 1024 fp32."""

from ladder import Ladder, Step, one_input_host, reference

REFERENCE = reference(
    forward='return torch.cumsum(x, dim=1)',
    sizes='ROWS, COLS = 32768, 1024',
    inputs='[torch.rand(ROWS, COLS)]',
)

HOST = one_input_host("torch::empty_like(x)", matrix=True,
                      setup='TORCH_CHECK(cols == 1024, "a block of 1024 threads scans a row of 1024");')

HILLIS_STEELE = '''
__global__ void scan_hillis_steele(const float* x, float* y, int cols) {
    __shared__ float temp[2][1024];  // blockDim.x == cols == 1024: two buffers, read one, write the other
    const int t = threadIdx.x;
    const size_t row = (size_t)blockIdx.x * cols;
    int pout = 0, pin = 1;
    temp[pout][t] = x[row + t];
    __syncthreads();
    for (int offset = 1; offset < cols; offset <<= 1) {
        pout = 1 - pout;
        pin = 1 - pout;
        temp[pout][t] = t >= offset ? temp[pin][t] + temp[pin][t - offset] : temp[pin][t];
        __syncthreads();
    }
    y[row + t] = temp[pout][t];
}
'''

WARP_SHUFFLE = '''
__device__ __forceinline__ float warp_inclusive_scan(float v, int lane) {
    for (int o = 1; o < 32; o <<= 1) {
        const float up = __shfl_up_sync(0xffffffffu, v, o);
        if (lane >= o) v += up;
    }
    return v;
}

__global__ void scan_warp_shuffle(const float* x, float* y, int cols) {
    __shared__ float totals[32];  // blockDim.x == cols == 1024: 32 warps
    const int t = threadIdx.x, lane = t % 32, warp = t / 32;
    const size_t row = (size_t)blockIdx.x * cols;
    float v = warp_inclusive_scan(x[row + t], lane);
    if (lane == 31) totals[warp] = v;
    __syncthreads();
    if (warp == 0) totals[lane] = warp_inclusive_scan(totals[lane], lane);
    __syncthreads();
    if (warp > 0) v += totals[warp - 1];
    y[row + t] = v;
}
'''

LADDER = Ladder(
    key="heldout_scan",
    title="Row prefix sum ladder (held out)",
    origin="After Harris, Sengupta and Owens, 'Parallel Prefix Sum (Scan) with CUDA' (GPU Gems 3, chapter 39), "
           "and NVIDIA/cuda-samples (BSD-3-Clause), shfl_scan.",
    reference=REFERENCE,
    args="x",
    signature="torch::Tensor run(torch::Tensor x)",
    host=HOST,
    steps=(
        Step("Hillis-Steele in shared memory: ten barriers, n log n adds", HILLIS_STEELE,
             "scan_hillis_steele<<<rows, 1024>>>(in, out, cols);", "scan_hillis_steele", "use-warp-shuffles"),
        Step("a shuffle scan a warp, the warps' totals scanned by one warp", WARP_SHUFFLE,
             "scan_warp_shuffle<<<rows, 1024>>>(in, out, cols);", "scan_warp_shuffle", None),
    ),
)
