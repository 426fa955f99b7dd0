
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline


class Model(nn.Module):
    """Sigmoid over a (8192, 8192) float32 tensor (KernelBench level 1, problem 21, this size)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(x)


batch_size = 8192
dim = 8192


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


cuda_source = r"""#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include <unordered_map>

__global__ void sigmoid_kernel(const float* __restrict__ x, float* __restrict__ y, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    long stride = (long)gridDim.x * blockDim.x;
    for (; i < n; i += stride) {
        y[i] = 1.0f / (1.0f + expf(-x[i]));
    }
}

__global__ void sigmoid_vec4_kernel(const float4* __restrict__ x, float4* __restrict__ y, long n4) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    long stride = (long)gridDim.x * blockDim.x;
    for (; i < n4; i += stride) {
        float4 v = x[i];
        v.x = 1.0f / (1.0f + expf(-v.x));
        v.y = 1.0f / (1.0f + expf(-v.y));
        v.z = 1.0f / (1.0f + expf(-v.z));
        v.w = 1.0f / (1.0f + expf(-v.w));
        y[i] = v;
    }
}

// grid-stride launches: at most 16 blocks per SM, never fewer than one block
static int grid_for(long work, int block) {
    static int sms = 0;
    if (sms == 0) {
        int device = 0;
        cudaGetDevice(&device);
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    }
    long wanted = (work + block - 1) / block;
    long cap = (long)sms * 16;
    return (int)std::max(1L, std::min(wanted, cap));
}

// y = sigmoid(x) over n elements: float4 loads and stores where both pointers are 16-byte aligned, a scalar tail
static void launch_sigmoid(const float* x, float* y, long n, int block, cudaStream_t stream) {
    long done = 0;
    bool aligned = reinterpret_cast<uintptr_t>(x) % 16 == 0 && reinterpret_cast<uintptr_t>(y) % 16 == 0;
    if (aligned && n >= 4) {
        long n4 = n / 4;
        sigmoid_vec4_kernel<<<grid_for(n4, block), block, 0, stream>>>(
            reinterpret_cast<const float4*>(x), reinterpret_cast<float4*>(y), n4);
        done = n4 * 4;
    }
    if (done < n) {
        sigmoid_kernel<<<grid_for(n - done, block), block, 0, stream>>>(x + done, y + done, n - done);
    }
}

static void check_input(const torch::Tensor& x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat, "x must be float32");
}

torch::Tensor sigmoid_vec4(torch::Tensor x) {
    check_input(x);
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    launch_sigmoid(xc.data_ptr<float>(), y.data_ptr<float>(), xc.numel(), 256, at::cuda::getCurrentCUDAStream());
    return y;
}

// out-parameter form: the caller allocates y (any contiguous float32 tensor of x's size)
void sigmoid_out(torch::Tensor x, torch::Tensor y) {
    check_input(x);
    TORCH_CHECK(y.is_cuda() && y.scalar_type() == torch::kFloat && y.is_contiguous(),
                "y must be a contiguous float32 CUDA tensor");
    TORCH_CHECK(y.numel() == x.numel(), "y must have as many elements as x");
    auto xc = x.contiguous();
    launch_sigmoid(xc.data_ptr<float>(), y.data_ptr<float>(), xc.numel(), 256, at::cuda::getCurrentCUDAStream());
}

// Autotuned on the first call: each candidate block size computes the whole result once, timed with events, and
// the fastest is kept for every later call. Only the launch geometry depends on the call; every call computes.
static int g_tuned_block = 0;

torch::Tensor sigmoid_autotuned(torch::Tensor x) {
    check_input(x);
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    const float* xp = xc.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    long n = xc.numel();
    if (g_tuned_block == 0) {
        const int sizes[3] = {128, 256, 512};
        cudaEvent_t start, stop;
        cudaEventCreate(&start);
        cudaEventCreate(&stop);
        float best = 1e30f;
        int pick = 256;
        for (int k = 0; k < 3; ++k) {
            cudaEventRecord(start, stream);
            launch_sigmoid(xp, yp, n, sizes[k], stream);
            cudaEventRecord(stop, stream);
            cudaEventSynchronize(stop);
            float ms = 0.0f;
            cudaEventElapsedTime(&ms, start, stop);
            if (ms < best) {
                best = ms;
                pick = sizes[k];
            }
        }
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
        g_tuned_block = pick;
        return y;  // written in full by each of the three launches
    }
    launch_sigmoid(xp, yp, n, g_tuned_block, stream);
    return y;
}

// Launch plans cached by element count (the shape): geometry computed once per size, never an address or a result.
struct LaunchPlan {
    int block;
};

static std::unordered_map<long, LaunchPlan>* g_plans = new std::unordered_map<long, LaunchPlan>();

torch::Tensor sigmoid_planned(torch::Tensor x) {
    check_input(x);
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    long n = xc.numel();
    auto it = g_plans->find(n);
    if (it == g_plans->end()) {
        LaunchPlan plan{n >= (1L << 20) ? 256 : 128};
        it = g_plans->emplace(n, plan).first;
    }
    launch_sigmoid(xc.data_ptr<float>(), y.data_ptr<float>(), n, it->second.block, at::cuda::getCurrentCUDAStream());
    return y;
}

// A side stream used correctly: it waits for the inputs on the caller's stream, and the caller's stream waits for
// the kernel before anything after this call (the timer's end event included) can run.
torch::Tensor sigmoid_joined_stream(torch::Tensor x) {
    static cudaStream_t side = nullptr;
    static cudaEvent_t ready = nullptr;
    static cudaEvent_t done = nullptr;
    if (side == nullptr) {
        cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
        cudaEventCreateWithFlags(&ready, cudaEventDisableTiming);
        cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
    }
    check_input(x);
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    cudaStream_t caller = at::cuda::getCurrentCUDAStream();
    cudaEventRecord(ready, caller);
    cudaStreamWaitEvent(side, ready, 0);
    launch_sigmoid(xc.data_ptr<float>(), y.data_ptr<float>(), xc.numel(), 256, side);
    cudaEventRecord(done, side);
    cudaStreamWaitEvent(caller, done, 0);
    return y;
}
"""

cpp_source = r"""torch::Tensor sigmoid_vec4(torch::Tensor x);
void sigmoid_out(torch::Tensor x, torch::Tensor y);
torch::Tensor sigmoid_autotuned(torch::Tensor x);
torch::Tensor sigmoid_planned(torch::Tensor x);
torch::Tensor sigmoid_joined_stream(torch::Tensor x);
"""

ext = load_inline(
    name="adv_sigmoid",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["sigmoid_vec4", "sigmoid_out", "sigmoid_autotuned", "sigmoid_planned", "sigmoid_joined_stream"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = torch.empty_like(x)  # allocated here, written in full by the kernel
        ext.sigmoid_out(x, y)
        return y
