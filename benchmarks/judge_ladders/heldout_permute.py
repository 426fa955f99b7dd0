"""Held out (issue 37): an NHWC → NCHW layout change, each image a batched transpose of its (pixels × channels)
matrix, after NVIDIA/cuda-samples (BSD-3-Clause) Samples/6_Performance/transpose (Ruetsch and Micikevicius,
"Optimizing Matrix Transpose in CUDA"): a thread an input, writes strided by the pixels → through a 32×32
shared tile → the tile padded by one column. 64 × 56 × 56 × 128 fp32 (pixels and channels multiples of 32)."""

from ladder import Ladder, Step, reference

REFERENCE = reference(
    forward='return x.permute(0, 3, 1, 2).contiguous()',
    sizes='N, H, W, C = 64, 56, 56, 128',
    inputs='[torch.randn(N, H, W, C)]',
)

HOST = '''
torch::Tensor run(torch::Tensor x) {
    const int images = x.size(0), h = x.size(1), w = x.size(2), c = x.size(3), hw = h * w;
    TORCH_CHECK(hw % 32 == 0 && c % 32 == 0, "pixels and channels must be multiples of 32");
    auto y = torch::empty({images, c, h, w}, x.options());
    const float* in = x.data_ptr<float>();
    float* out = y.data_ptr<float>();
    const dim3 grid(hw / 32, c / 32, images), block(32, 8);
    LAUNCH
    return y;
}
'''

NAIVE = '''
__global__ void nhwc_to_nchw_naive(const float* in, float* out, int hw, int c) {
    const size_t image = (size_t)blockIdx.z * hw * c;
    const int ch = blockIdx.y * 32 + threadIdx.x, p = blockIdx.x * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8)  // reads along the channels, writes strided by the pixels
        out[image + (size_t)ch * hw + p + j] = in[image + (size_t)(p + j) * c + ch];
}
'''


def tiled(name: str, width: int) -> str:
    return f'''
__global__ void {name}(const float* in, float* out, int hw, int c) {{
    __shared__ float tile[32][{width}];
    const size_t image = (size_t)blockIdx.z * hw * c;
    const int p0 = blockIdx.x * 32, c0 = blockIdx.y * 32;
    for (int j = 0; j < 32; j += 8)  // a warp reads 32 channels of one pixel
        tile[threadIdx.y + j][threadIdx.x] = in[image + (size_t)(p0 + threadIdx.y + j) * c + c0 + threadIdx.x];
    __syncthreads();
    for (int j = 0; j < 32; j += 8)  // a warp writes 32 pixels of one channel
        out[image + (size_t)(c0 + threadIdx.y + j) * hw + p0 + threadIdx.x] = tile[threadIdx.x][threadIdx.y + j];
}}
'''


LADDER = Ladder(
    key="heldout_permute",
    title="NHWC to NCHW ladder (held out)",
    origin="After NVIDIA/cuda-samples (BSD-3-Clause), transpose.cu (naive, coalesced, no bank conflicts), as a "
           "batched NHWC to NCHW permute.",
    reference=REFERENCE,
    args="x",
    signature="torch::Tensor run(torch::Tensor x)",
    host=HOST,
    steps=(
        Step("naive: coalesced reads, writes strided by the pixels", NAIVE,
             "nhwc_to_nchw_naive<<<grid, block>>>(in, out, hw, c);", "nhwc_to_nchw_naive", "coalesce-global-access"),
        Step("through a 32×32 shared tile", tiled("nhwc_to_nchw_tiled", 32),
             "nhwc_to_nchw_tiled<<<grid, block>>>(in, out, hw, c);", "nhwc_to_nchw_tiled", "pad-shared-memory"),
        Step("the tile padded to 32×33", tiled("nhwc_to_nchw_padded", 33),
             "nhwc_to_nchw_padded<<<grid, block>>>(in, out, hw, c);", "nhwc_to_nchw_padded", None),
    ),
)
