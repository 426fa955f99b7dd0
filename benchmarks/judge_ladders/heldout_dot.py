"""Held out (issue 37): the dot product of Sanders and Kandrot's "CUDA by Example" (NVIDIA, 2010), chapter 5
(32 blocks, each block's sum copied to the host and added there) → Appendix A.1, "Dot product revisited" (the
blocks' sums added on the device with an atomic) → the grid sized to fill the GPU, as the CUDA C++ Best Practices
Guide's "Occupancy" asks (a few blocks an SM). 1 << 20 fp32 elements of small whole numbers, so that every order
of the additions gives the same float."""

from ladder import Ladder, Step, reference

REFERENCE = reference(
    forward='return torch.dot(a, b)',
    sizes='N = 1 << 20',
    inputs='[torch.randint(0, 4, (N,)).float(), torch.randint(0, 4, (N,)).float()]',
)

HOST = '''
torch::Tensor run(torch::Tensor a, torch::Tensor b) {
    const int n = a.numel();
    const float* A = a.data_ptr<float>();
    const float* B = b.data_ptr<float>();
    LAUNCH
}
'''


def dot(name: str, finish: str) -> str:
    """The book's kernel: a grid-stride sum a thread, a shared-memory tree a block, then `finish` in thread 0."""
    return f'''
__global__ void {name}(const float* a, const float* b, float* c, int n) {{
    __shared__ float cache[256];  // blockDim.x == 256
    float temp = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) temp += a[i] * b[i];
    cache[threadIdx.x] = temp;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {{
        if (threadIdx.x < s) cache[threadIdx.x] += cache[threadIdx.x + s];
        __syncthreads();
    }}
    if (threadIdx.x == 0) {finish};
}}
'''


LADDER = Ladder(
    key="heldout_dot",
    title="Dot product ladder (held out)",
    origin="After Sanders and Kandrot, 'CUDA by Example' (NVIDIA, 2010), chapter 5 and Appendix A.1, and the CUDA "
           "C++ Best Practices Guide, 'Occupancy'.",
    reference=REFERENCE,
    args="a, b",
    signature="torch::Tensor run(torch::Tensor a, torch::Tensor b)",
    host=HOST,
    steps=(
        Step("32 blocks, their sums added on the host", dot("dot_partial_sums", "c[blockIdx.x] = cache[0]"),
             "constexpr int blocks = 32;  // the book's imin(32, (N + 255) / 256)\n"
             "    auto partial = torch::empty({blocks}, a.options());\n"
             "    dot_partial_sums<<<blocks, 256>>>(A, B, partial.data_ptr<float>(), n);\n"
             "    auto host = partial.cpu();  // the host waits for the kernel, then adds the 32 sums\n"
             "    float sum = 0.0f;\n"
             "    for (int i = 0; i < blocks; ++i) sum += host.data_ptr<float>()[i];\n"
             "    return torch::full({}, sum, a.options());",
             "dot_partial_sums", "avoid-host-synchronization"),
        Step("32 blocks, their sums added on the device", dot("dot_atomic", "atomicAdd(c, cache[0])"),
             "auto c = torch::zeros({}, a.options());\n"
             "    dot_atomic<<<32, 256>>>(A, B, c.data_ptr<float>(), n);\n"
             "    return c;",
             "dot_atomic", "increase-parallelism"),
        Step("eight blocks an SM", dot("dot_atomic", "atomicAdd(c, cache[0])"),
             "auto c = torch::zeros({}, a.options());\n"
             "    int device = 0, sms = 0;\n"
             "    cudaGetDevice(&device);\n"
             "    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);\n"
             "    dot_atomic<<<sms * 8, 256>>>(A, B, c.data_ptr<float>(), n);\n"
             "    return c;",
             "dot_atomic", None),
    ),
)
