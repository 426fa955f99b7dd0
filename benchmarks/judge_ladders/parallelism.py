"""More blocks for a grid that leaves SMs idle, after NVIDIA/cuda-samples (BSD-3-Clause) reduction's
multi-block reduction and the CUDA C++ Best Practices Guide ("Occupancy", enough blocks for every SM): row sums
with a block a row over 64 rows → several blocks a row; column sums with a thread a column over 256 columns →
the rows split over blocks."""

from ladder import BLOCK_ADD, Ladder, Step, one_input_host, reference

ROWS_REFERENCE = reference(
    forward='return x.sum(dim=1)',
    sizes='ROWS, COLS = 64, 1 << 20',
    inputs='[torch.rand(ROWS, COLS)]',
)

ROWS_HOST = one_input_host("torch::zeros({rows}, x.options())", matrix=True)

ROW_SUM = BLOCK_ADD + '''
__global__ void row_sum_blocks(const float* x, float* out, int cols) {
    const float* xr = x + (size_t)blockIdx.y * cols;
    float v = 0.0f;
    for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < cols; c += blockDim.x * gridDim.x) v += xr[c];
    v = block_add(v);
    if (threadIdx.x == 0) atomicAdd(&out[blockIdx.y], v);
}
'''

ROW_SUMS = Ladder(
    key="rows_split",
    title="Row sums of a few long rows ladder",
    origin="After NVIDIA/cuda-samples (BSD-3-Clause) reduction (several blocks a reduction).",
    reference=ROWS_REFERENCE,
    args="x",
    signature="torch::Tensor run(torch::Tensor x)",
    host=ROWS_HOST,
    steps=(
        Step("a block a row: 64 blocks", ROW_SUM,
             "row_sum_blocks<<<dim3(1, rows), 1024>>>(in, out, cols);", "row_sum_blocks", "increase-parallelism"),
        Step("16 blocks a row: 1024 blocks", ROW_SUM,
             "row_sum_blocks<<<dim3(16, rows), 1024>>>(in, out, cols);", "row_sum_blocks", None),
    ),
)

COLS_REFERENCE = reference(
    forward='return x.sum(dim=0)',
    sizes='ROWS, COLS = 1 << 16, 256',
    inputs='[torch.rand(ROWS, COLS)]',
)

COLS_HOST = one_input_host("torch::zeros({cols}, x.options())", matrix=True)

COL_SUM = '''
__global__ void column_sum(const float* x, float* out, int rows, int cols, int rows_per_block) {
    const int c = threadIdx.x;  // blockDim.x == cols: a thread a column, coalesced along the row
    const int first = blockIdx.x * rows_per_block;
    const int last = min(rows, first + rows_per_block);
    float v = 0.0f;
    for (int r = first; r < last; ++r) v += x[(size_t)r * cols + c];
    atomicAdd(&out[c], v);  // one atomic a thread a block, each on its own column
}
'''

COL_SUMS = Ladder(
    key="columns_split",
    title="Column sums of a tall matrix ladder",
    origin="After the CUDA C++ Best Practices Guide, 'Occupancy' (enough blocks for every SM).",
    reference=COLS_REFERENCE,
    args="x",
    signature="torch::Tensor run(torch::Tensor x)",
    host=COLS_HOST,
    steps=(
        Step("one block walks every row", COL_SUM,
             "column_sum<<<1, cols>>>(in, out, rows, cols, rows);", "column_sum", "increase-parallelism"),
        Step("1024 blocks of 64 rows", COL_SUM,
             "column_sum<<<(rows + 63) / 64, cols>>>(in, out, rows, cols, 64);", "column_sum", None),
    ),
)

LADDERS = (ROW_SUMS, COL_SUMS)
