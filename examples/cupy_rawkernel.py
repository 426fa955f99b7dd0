"""CuPy RawKernel: a 2-D stencil (5-point average) on a row-major image, launched with 16x16 blocks.

What it shows: with blockDim.x = 16 a warp covers two image rows; loads by `x` along a row stay
coalesced (two 64-byte runs per warp), so the stencil itself is fine. The trap is the boundary branch:
`if (x == 0 || ...)` is thread-dependent but cheap, so it is not a divergence finding either.
Expect: no findings. (Swap `x` and `y` in the index — `img[x * width + y]` — and CL1xx appears.)
"""

import cupy as cp

stencil = cp.RawKernel(
    r"""
extern "C" __global__ void stencil5(const float* img, float* out, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    if (x == 0 || y == 0 || x == width - 1 || y == height - 1) {
        out[y * width + x] = img[y * width + x];
        return;
    }
    float c = img[y * width + x];
    float n = img[(y - 1) * width + x];
    float s = img[(y + 1) * width + x];
    float w = img[y * width + x - 1];
    float e = img[y * width + x + 1];
    out[y * width + x] = 0.2f * (c + n + s + w + e);
}
""",
    "stencil5",
)


def smooth(img: cp.ndarray) -> cp.ndarray:
    height, width = img.shape
    out = cp.empty_like(img)
    block = (16, 16)
    grid = ((width + 15) // 16, (height + 15) // 16)
    stencil(grid, block, (img, out, cp.int32(width), cp.int32(height)))
    return out


if __name__ == "__main__":
    image = cp.random.rand(1024, 1024, dtype=cp.float32)
    print(float(smooth(image).sum()))
