"""Shared memory per block cut to what the block uses, after the CUDA C++ Best Practices Guide ("Occupancy":
shared memory as a limiter, the occupancy calculator) and CUDAPerf's "Warp-Improper Kernel Launch Parameters"
class: a streaming kernel whose 48 KB scratch array holds four blocks of 64 threads on an SM (8 of 64 warps)."""

from ladder import Ladder, Step, one_input_host, reference

REFERENCE = reference(
    forward='return x * 2.0 + 1.0',
    sizes='N = 1 << 26',
    inputs='[torch.randn(N)]',
)

HOST = one_input_host("torch::empty_like(x)")


def scaled(name: str, floats: int) -> str:
    return f'''
__global__ void {name}(const float* x, float* y, int n) {{
    __shared__ float scratch[{floats}];  // a staging slot a thread
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) scratch[threadIdx.x] = x[i] * 2.0f;
    __syncthreads();
    if (i < n) y[i] = scratch[threadIdx.x] + 1.0f;
}}
'''


LADDER = Ladder(
    key="shared_occupancy",
    title="Oversized shared scratch ladder",
    origin="After the CUDA C++ Best Practices Guide, 'Occupancy'.",
    reference=REFERENCE,
    args="x",
    signature="torch::Tensor run(torch::Tensor x)",
    host=HOST,
    steps=(
        Step("48 KB of shared scratch a block of 64 threads", scaled("scale_shift_scratch", 12288),
             "scale_shift_scratch<<<(n + 63) / 64, 64>>>(in, out, n);", "scale_shift_scratch",
             "reduce-shared-memory"),
        Step("the 256 bytes the block uses", scaled("scale_shift_slot", 64),
             "scale_shift_slot<<<(n + 63) / 64, 64>>>(in, out, n);", "scale_shift_slot", None),
    ),
)
