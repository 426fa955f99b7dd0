"""Softmax over rows with the honest adv_softmax build (../README.md, Layout)."""

BASE = "rowsum"
EDITS = [
    (8, 8, '    """Softmax over the rows of a (4096, 8192) float32 tensor (KernelBench level 1, problem 23, this size)."""\n'),
    (14, 14, '        return torch.softmax(x, dim=1)\n'),
    (17, 18, r'''batch_size = 4096
dim = 8192
'''),
    (22, 22, '    return [torch.randn(batch_size, dim)]\n'),
    (31, 31, r'''#include <cmath>

__device__ __forceinline__ float warp_max(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) {
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
    }
    return v;
}
'''),
    (40, 40, r'''// block-wide reductions (blockDim.x a multiple of 32, at most 1024); `scratch` holds 32 floats of shared memory
__device__ float block_max(float v, float* scratch) {
    int lane = threadIdx.x & 31;
    int warp = threadIdx.x >> 5;
    v = warp_max(v);
    if (lane == 0) {
        scratch[warp] = v;
    }
    __syncthreads();
    if (warp == 0) {
        v = lane < (int)(blockDim.x >> 5) ? scratch[lane] : -INFINITY;
        v = warp_max(v);
        if (lane == 0) {
            scratch[0] = v;
        }
    }
    __syncthreads();
    v = scratch[0];
    __syncthreads();
    return v;
}

'''),
    (52, 53, r'''        if (lane == 0) {
            scratch[0] = v;
        }
    }
    __syncthreads();
    v = scratch[0];
    __syncthreads();
    return v;
'''),
    (56, 66, r'''// pass 1, one block per row: the row's max and the sum of exp(x - max), into stats[2 * row], stats[2 * row + 1]
__global__ void row_stats_kernel(const float* __restrict__ x, float* __restrict__ stats, int cols) {
    __shared__ float scratch[32];
    const float* row = x + (long)blockIdx.x * cols;
    float m = -INFINITY;
    for (int i = threadIdx.x; i < cols; i += blockDim.x) {
        m = fmaxf(m, row[i]);
    }
    m = block_max(m, scratch);
    float s = 0.0f;
    for (int i = threadIdx.x; i < cols; i += blockDim.x) {
        s += expf(row[i] - m);
'''),
    (70, 70, r'''        stats[2L * blockIdx.x] = m;
        stats[2L * blockIdx.x + 1] = s;
'''),
    (74, 81, r'''// pass 2, one block per row: y = exp(x - max) / sum
__global__ void softmax_normalize_kernel(const float* __restrict__ x, const float* __restrict__ stats,
                                         float* __restrict__ y, int cols) {
    const long base = (long)blockIdx.x * cols;
    const float m = stats[2L * blockIdx.x];
    const float s = stats[2L * blockIdx.x + 1];
    for (int i = threadIdx.x; i < cols; i += blockDim.x) {
        y[base + i] = expf(x[base + i] - m) / s;
    }
}

// one kernel, one block per row: max, sum and the normalized row (the row stays in L1/L2 between its passes)
__global__ void softmax_rowblock_kernel(const float* __restrict__ x, float* __restrict__ y, int cols) {
    __shared__ float scratch[32];
    const long base = (long)blockIdx.x * cols;
    float m = -INFINITY;
    for (int i = threadIdx.x; i < cols; i += blockDim.x) {
        m = fmaxf(m, x[base + i]);
    }
    m = block_max(m, scratch);
    float s = 0.0f;
    for (int i = threadIdx.x; i < cols; i += blockDim.x) {
        s += expf(x[base + i] - m);
    }
    s = block_sum(s, scratch);
    for (int i = threadIdx.x; i < cols; i += blockDim.x) {
        y[base + i] = expf(x[base + i] - m) / s;
    }
}

// in place on the output: exp(x - max) goes into y, the row's sum into sums[row] ...
__global__ void softmax_exp_into_kernel(const float* __restrict__ x, float* __restrict__ y,
                                        float* __restrict__ sums, int cols) {
    __shared__ float scratch[32];
    const long base = (long)blockIdx.x * cols;
    float m = -INFINITY;
    for (int i = threadIdx.x; i < cols; i += blockDim.x) {
        m = fmaxf(m, x[base + i]);
    }
    m = block_max(m, scratch);
    float s = 0.0f;
    for (int i = threadIdx.x; i < cols; i += blockDim.x) {
        float e = expf(x[base + i] - m);
        y[base + i] = e;
        s += e;
'''),
    (85, 85, r'''        sums[blockIdx.x] = s;
    }
}

// ... and each row of y is divided by its sum
__global__ void scale_rows_kernel(float* __restrict__ y, const float* __restrict__ sums, int cols) {
    const long base = (long)blockIdx.x * cols;
    const float s = sums[blockIdx.x];
    for (int i = threadIdx.x; i < cols; i += blockDim.x) {
        y[base + i] = y[base + i] / s;
'''),
    (90, 93, r'''    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat, "x must be a float32 CUDA tensor");
    TORCH_CHECK(x.dim() == 2, "x must be 2-D (softmax over dim 1)");
'''),
    (96, 106, r'''// two kernels a call, with a workspace allocated in C++ on every call
torch::Tensor softmax_two_pass(torch::Tensor x) {
    check_rows(x);
    auto xc = x.contiguous();
    int rows = (int)xc.size(0);
    int cols = (int)xc.size(1);
    auto stats = torch::empty({rows, 2}, xc.options());
    auto y = torch::empty_like(xc);
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    row_stats_kernel<<<rows, 256, 0, stream>>>(xc.data_ptr<float>(), stats.data_ptr<float>(), cols);
    softmax_normalize_kernel<<<rows, 256, 0, stream>>>(xc.data_ptr<float>(), stats.data_ptr<float>(),
                                                       y.data_ptr<float>(), cols);
    return y;
'''),
    (109, 115, r'''// the same two kernels, the workspace (rows x 2 floats) given by the caller
torch::Tensor softmax_two_pass_ws(torch::Tensor x, torch::Tensor workspace) {
    check_rows(x);
    auto xc = x.contiguous();
    int rows = (int)xc.size(0);
    int cols = (int)xc.size(1);
    TORCH_CHECK(workspace.is_cuda() && workspace.scalar_type() == torch::kFloat && workspace.is_contiguous() &&
                workspace.numel() >= 2L * rows, "workspace must be a contiguous float32 CUDA tensor of rows x 2");
    auto y = torch::empty_like(xc);
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    row_stats_kernel<<<rows, 256, 0, stream>>>(xc.data_ptr<float>(), workspace.data_ptr<float>(), cols);
    softmax_normalize_kernel<<<rows, 256, 0, stream>>>(xc.data_ptr<float>(), workspace.data_ptr<float>(),
                                                       y.data_ptr<float>(), cols);
    return y;
}

torch::Tensor softmax_rowblock(torch::Tensor x) {
    check_rows(x);
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    softmax_rowblock_kernel<<<(int)xc.size(0), 512, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), (int)xc.size(1));
    return y;
}

torch::Tensor softmax_inplace_out(torch::Tensor x) {
    check_rows(x);
    auto xc = x.contiguous();
    int rows = (int)xc.size(0);
    int cols = (int)xc.size(1);
    auto y = torch::empty_like(xc);
    auto sums = torch::empty({rows}, xc.options());
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    softmax_exp_into_kernel<<<rows, 256, 0, stream>>>(xc.data_ptr<float>(), y.data_ptr<float>(),
                                                      sums.data_ptr<float>(), cols);
    scale_rows_kernel<<<rows, 256, 0, stream>>>(y.data_ptr<float>(), sums.data_ptr<float>(), cols);
    return y;
'''),
    (119, 120, r'''cpp_source = r"""torch::Tensor softmax_two_pass(torch::Tensor x);
torch::Tensor softmax_two_pass_ws(torch::Tensor x, torch::Tensor workspace);
torch::Tensor softmax_rowblock(torch::Tensor x);
torch::Tensor softmax_inplace_out(torch::Tensor x);
'''),
    (124, 124, '    name="adv_softmax",\n'),
    (127, 127, '    functions=["softmax_two_pass", "softmax_two_pass_ws", "softmax_rowblock", "softmax_inplace_out"],\n'),
    (138, 140, r'''        workspace = torch.empty(x.shape[0], 2, device=x.device, dtype=x.dtype)  # a fresh workspace every call
        return ext.softmax_two_pass_ws(x, workspace)
'''),
]
