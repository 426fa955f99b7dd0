"""Sum of a vector, after NVIDIA/cuda-samples (BSD-3-Clause) Samples/2_Concepts_and_Techniques/reduction,
reduce0-reduce6 (Mark Harris, "Optimizing Parallel Reduction in CUDA"): divergent interleaved addressing →
strided index → sequential addressing → first add during load → last warp with shuffles (the sample's
warp-synchronous code is unsafe since Volta) → complete unrolling (a constant block size) → many elements a thread (float4 here). Each
block writes a partial sum; one block adds the partials."""

from ladder import WARP_ADD, Ladder, Step, reference

REFERENCE = reference(
    forward='return x.sum()',
    sizes='N = 1 << 25',
    inputs='[torch.rand(N)]',
)

HOST = '''
__global__ void reduce_partials(const float* partials, float* total, int m) {
    __shared__ float s[1024];
    float v = 0.0f;
    for (int i = threadIdx.x; i < m; i += 1024) v += partials[i];
    s[threadIdx.x] = v;
    __syncthreads();
    for (int k = 512; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) *total = s[0];
}

torch::Tensor run(torch::Tensor x) {
    const int n = x.numel();
    const float* in = x.data_ptr<float>();
    auto total = torch::empty({}, x.options());
    LAUNCH
    reduce_partials<<<1, 1024>>>(partials.data_ptr<float>(), total.data_ptr<float>(), blocks);
    return total;
}
'''



def launch(kernel: str, per_block: int, blocks: str | None = None) -> str:
    blocks = blocks or f"(n + {per_block - 1}) / {per_block}"
    return (f"const int blocks = {blocks};\n    auto partials = torch::empty({{blocks}}, x.options());\n"
            f"    {kernel}<<<blocks, 256>>>(in, partials.data_ptr<float>(), n);")


INTERLEAVED_DIVERGENT = '''
__global__ void reduce_divergent(const float* in, float* partials, int n) {
    __shared__ float s[256];
    const unsigned tid = threadIdx.x, i = blockIdx.x * blockDim.x + tid;
    s[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned k = 1; k < blockDim.x; k *= 2) {
        if (tid % (2 * k) == 0) s[tid] += s[tid + k];  // active lanes scattered over every warp
        __syncthreads();
    }
    if (tid == 0) partials[blockIdx.x] = s[0];
}
'''

INTERLEAVED_STRIDED = '''
__global__ void reduce_strided(const float* in, float* partials, int n) {
    __shared__ float s[256];
    const unsigned tid = threadIdx.x, i = blockIdx.x * blockDim.x + tid;
    s[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned k = 1; k < blockDim.x; k *= 2) {
        const unsigned index = 2 * k * tid;  // contiguous active lanes, strided shared addresses
        if (index < blockDim.x) s[index] += s[index + k];
        __syncthreads();
    }
    if (tid == 0) partials[blockIdx.x] = s[0];
}
'''

SEQUENTIAL = '''
__global__ void reduce_sequential(const float* in, float* partials, int n) {
    __shared__ float s[256];
    const unsigned tid = threadIdx.x, i = blockIdx.x * blockDim.x + tid;
    s[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {
        if (tid < k) s[tid] += s[tid + k];
        __syncthreads();
    }
    if (tid == 0) partials[blockIdx.x] = s[0];
}
'''

FIRST_ADD = '''
__global__ void reduce_first_add(const float* in, float* partials, int n) {
    __shared__ float s[256];
    const unsigned tid = threadIdx.x, i = blockIdx.x * blockDim.x * 2 + tid;
    float v = i < n ? in[i] : 0.0f;
    if (i + blockDim.x < n) v += in[i + blockDim.x];
    s[tid] = v;
    __syncthreads();
    for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {
        if (tid < k) s[tid] += s[tid + k];
        __syncthreads();
    }
    if (tid == 0) partials[blockIdx.x] = s[0];
}
'''

LAST_WARP = WARP_ADD + '''
__global__ void reduce_last_warp(const float* in, float* partials, int n) {
    __shared__ float s[256];
    const unsigned tid = threadIdx.x, i = blockIdx.x * blockDim.x * 2 + tid;
    float v = i < n ? in[i] : 0.0f;
    if (i + blockDim.x < n) v += in[i + blockDim.x];
    s[tid] = v;
    __syncthreads();
    for (unsigned k = blockDim.x / 2; k > 32; k >>= 1) {
        if (tid < k) s[tid] += s[tid + k];
        __syncthreads();
    }
    if (tid < 32) {
        v = warp_add(s[tid] + s[tid + 32]);
        if (tid == 0) partials[blockIdx.x] = v;
    }
}
'''

UNROLLED = WARP_ADD + '''
__global__ void reduce_unrolled(const float* in, float* partials, int n) {
    constexpr unsigned BLOCK = 256;  // the sample's template argument: every bound below is a constant
    __shared__ float s[BLOCK];
    const unsigned tid = threadIdx.x, i = blockIdx.x * BLOCK * 2 + tid;
    float v = i < n ? in[i] : 0.0f;
    if (i + BLOCK < n) v += in[i + BLOCK];
    s[tid] = v;
    __syncthreads();
    if (BLOCK >= 512) { if (tid < 256) s[tid] += s[tid + 256]; __syncthreads(); }
    if (BLOCK >= 256) { if (tid < 128) s[tid] += s[tid + 128]; __syncthreads(); }
    if (BLOCK >= 128) { if (tid < 64) s[tid] += s[tid + 64]; __syncthreads(); }
    if (tid < 32) {
        v = warp_add(s[tid] + s[tid + 32]);
        if (tid == 0) partials[blockIdx.x] = v;
    }
}
'''

MANY_PER_THREAD = WARP_ADD + '''
__global__ void reduce_grid_stride(const float* in, float* partials, int n) {
    constexpr unsigned BLOCK = 256;
    __shared__ float s[BLOCK];
    const unsigned tid = threadIdx.x;
    const int n4 = n / 4, stride = BLOCK * gridDim.x;
    const float4* in4 = reinterpret_cast<const float4*>(in);
    float v = 0.0f;
    for (int i = blockIdx.x * BLOCK + tid; i < n4; i += stride) {
        const float4 t = in4[i];
        v += (t.x + t.y) + (t.z + t.w);
    }
    for (int i = 4 * n4 + blockIdx.x * BLOCK + tid; i < n; i += stride) v += in[i];
    s[tid] = v;
    __syncthreads();
    if (BLOCK >= 512) { if (tid < 256) s[tid] += s[tid + 256]; __syncthreads(); }
    if (BLOCK >= 256) { if (tid < 128) s[tid] += s[tid + 128]; __syncthreads(); }
    if (BLOCK >= 128) { if (tid < 64) s[tid] += s[tid + 64]; __syncthreads(); }
    if (tid < 32) {
        v = warp_add(s[tid] + s[tid + 32]);
        if (tid == 0) partials[blockIdx.x] = v;
    }
}
'''

LADDER = Ladder(
    key="reduction",
    title="Parallel reduction ladder",
    origin="After NVIDIA/cuda-samples (BSD-3-Clause), reduction_kernel.cu reduce0-reduce6.",
    reference=REFERENCE,
    args="x",
    signature="torch::Tensor run(torch::Tensor x)",
    host=HOST,
    steps=(
        Step("interleaved addressing, divergent branch", INTERLEAVED_DIVERGENT, launch("reduce_divergent", 256),
             "reduce_divergent", "remove-warp-divergence"),
        Step("interleaved addressing, strided index (bank conflicts)", INTERLEAVED_STRIDED,
             launch("reduce_strided", 256), "reduce_strided", "pad-shared-memory"),
        Step("sequential addressing", SEQUENTIAL, launch("reduce_sequential", 256), "reduce_sequential",
             "hide-memory-latency"),
        Step("first add during the global load", FIRST_ADD, launch("reduce_first_add", 512), "reduce_first_add",
             "use-warp-shuffles"),
        Step("last warp reduced with shuffles", LAST_WARP, launch("reduce_last_warp", 512), "reduce_last_warp",
             "reduce-instruction-count"),
        Step("completely unrolled (block size a constant)", UNROLLED,
             launch("reduce_unrolled", 512), "reduce_unrolled", "vectorize-memory-access"),
        Step("many elements a thread, float4 loads, grid-stride loop", MANY_PER_THREAD,
             launch("reduce_grid_stride", 0, blocks="1056"), "reduce_grid_stride", None),
    ),
)
