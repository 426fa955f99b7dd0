"""Independent loads in flight per thread, after Vasily Volkov's "Better Performance at Lower Occupancy" (GTC
2010) and the CUDA C++ Best Practices Guide ("Hiding register dependencies", instruction-level parallelism): a
grid-stride copy with one block an SM and one load in flight a thread → four independent loads a thread."""

from ladder import Ladder, Step, one_input_host, reference

REFERENCE = reference(
    forward="return x * 2.0 + 1.0",
    sizes="N = 1 << 25",
    inputs="[torch.randn(N)]",
)

ONE_IN_FLIGHT = '''
__global__ void scale_shift_one_load(const float* x, float* y, int n) {
    const int stride = blockDim.x * gridDim.x;
    #pragma unroll 1
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) y[i] = x[i] * 2.0f + 1.0f;
}
'''

FOUR_IN_FLIGHT = '''
__global__ void scale_shift_four_loads(const float* x, float* y, int n) {
    const int stride = blockDim.x * gridDim.x;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    #pragma unroll 1
    for (; i + 3 * stride < n; i += 4 * stride) {
        const float a = x[i], b = x[i + stride], c = x[i + 2 * stride], d = x[i + 3 * stride];  // all issued first
        y[i] = a * 2.0f + 1.0f;
        y[i + stride] = b * 2.0f + 1.0f;
        y[i + 2 * stride] = c * 2.0f + 1.0f;
        y[i + 3 * stride] = d * 2.0f + 1.0f;
    }
    for (; i < n; i += stride) y[i] = x[i] * 2.0f + 1.0f;
}
'''

LADDER = Ladder(
    key="latency_ilp",
    title="Loads in flight ladder",
    origin="After Vasily Volkov, 'Better Performance at Lower Occupancy' (GTC 2010).",
    reference=REFERENCE,
    args="x",
    signature="torch::Tensor run(torch::Tensor x)",
    host=one_input_host("torch::empty_like(x)"),
    steps=(
        Step("one block of 128 threads an SM, one load in flight a thread", ONE_IN_FLIGHT,
             "scale_shift_one_load<<<132, 128>>>(in, out, n);", "scale_shift_one_load", "hide-memory-latency"),
        Step("four independent loads in flight a thread", FOUR_IN_FLIGHT,
             "scale_shift_four_loads<<<132, 128>>>(in, out, n);", "scale_shift_four_loads", None),
    ),
)
