"""Warp divergence removed by giving each warp one side of the branch, after the CUDA C++ Best Practices Guide
("Branching and Divergence": make the condition a multiple of the warp size) and CUDAPerf's "Warp-Branch
Divergence" class: even and odd elements take two different polynomials."""

from ladder import Ladder, Step, one_input_host, reference

REFERENCE = reference(
    forward='''
y = torch.empty_like(x)
y[0::2] = horner(x[0::2], EVEN)
y[1::2] = horner(x[1::2], ODD)
return y
''',
    sizes='N = 1 << 24',
    inputs='[torch.rand(N) * 2 - 1]',
    preamble='''
EVEN = [1.0 / (k + 1) for k in range(48)]
ODD = [(-1.0) ** k / (k + 2) for k in range(48)]


def horner(x, coefficients):
    y = torch.zeros_like(x)
    for c in reversed(coefficients):
        y = y * x + c
    return y
''',
)

HOST = one_input_host("torch::empty_like(x)")

POLYNOMIALS = '''
__device__ __forceinline__ float even_poly(float x) {
    float y = 0.0f;
    #pragma unroll
    for (int k = 47; k >= 0; --k) y = y * x + 1.0f / (k + 1);
    return y;
}

__device__ __forceinline__ float odd_poly(float x) {
    float y = 0.0f;
    #pragma unroll
    for (int k = 47; k >= 0; --k) y = y * x + ((k % 2) ? -1.0f : 1.0f) / (k + 2);
    return y;
}
'''

DIVERGENT = POLYNOMIALS + '''
__global__ void two_polynomials_divergent(const float* x, float* y, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (i % 2 == 0) y[i] = even_poly(x[i]);  // neighbouring lanes take different sides
    else y[i] = odd_poly(x[i]);
}
'''

UNIFORM = POLYNOMIALS + '''
__global__ void two_polynomials_uniform(const float* x, float* y, int n) {
    // warp w of a pair takes the even elements of 64, warp w + 1 the odd ones: one side a warp
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    const int warp = t / 32, lane = t % 32;
    const int i = (warp / 2) * 64 + 2 * lane + (warp % 2);
    if (i >= n) return;
    if (warp % 2 == 0) y[i] = even_poly(x[i]);
    else y[i] = odd_poly(x[i]);
}
'''

LADDER = Ladder(
    key="divergence",
    title="Two polynomials by parity ladder",
    origin="After the CUDA C++ Best Practices Guide, 'Branching and Divergence'.",
    reference=REFERENCE,
    args="x",
    signature="torch::Tensor run(torch::Tensor x)",
    host=HOST,
    steps=(
        Step("the side chosen by the element's parity", DIVERGENT,
             "two_polynomials_divergent<<<(n + 255) / 256, 256>>>(in, out, n);", "two_polynomials_divergent",
             "remove-warp-divergence"),
        Step("the side chosen by the warp's parity", UNIFORM,
             "two_polynomials_uniform<<<(n + 255) / 256, 256>>>(in, out, n);", "two_polynomials_uniform", None),
    ),
)
