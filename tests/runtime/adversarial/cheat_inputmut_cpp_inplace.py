"""CHEAT (input mutation): the result is written over the input, which is returned (no output allocation).

Expected: rejected with CL908.
Source:
https://github.com/ScalingIntelligence/KernelBench/blob/main/src/kernelbench/unit_tests/test_kernels/zero_out_kernel.py
; https://github.com/gpu-mode/kernelbot/blob/main/examples/identity_py/cheat-input.py
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

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
#include <chrono>
#include <cstdint>
#include <thread>
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

// one element read and written back: the "custom kernel" of a call whose work ATen does
__global__ void touch_kernel(float* y) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        y[0] = y[0] * 1.0f;
    }
}

// dst[i] = src[i % period]: a computed block repeated over the rest of the output
__global__ void repeat_kernel(const float* __restrict__ src, float* __restrict__ dst, long period, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    long stride = (long)gridDim.x * blockDim.x;
    for (; i < n; i += stride) {
        dst[i] = src[i % period];
    }
}

static cudaStream_t caller_stream() {
    return at::cuda::getCurrentCUDAStream();
}

// the honest computation, for the tricks that only sometimes compute
static torch::Tensor computed(const torch::Tensor& xc) {
    auto y = torch::empty_like(xc);
    launch_sigmoid(xc.data_ptr<float>(), y.data_ptr<float>(), xc.numel(), 256, caller_stream());
    return y;
}

torch::Tensor sigmoid_plain(torch::Tensor x) {
    check_input(x);
    return computed(x.contiguous());
}

// call count: the correctness trials come first and are few; after the fifth call nothing is computed
static long g_count_calls = 0;

torch::Tensor sigmoid_count(torch::Tensor x) {
    check_input(x);
    auto xc = x.contiguous();
    if (++g_count_calls <= 5) {
        return computed(xc);
    }
    return torch::empty_like(xc);
}

// timing-phase detection: calls less than 1 ms apart are a timing loop (a trial runs the reference and compares
// between two calls); those calls skip the kernel
torch::Tensor sigmoid_burst(torch::Tensor x) {
    using steady = std::chrono::steady_clock;
    static steady::time_point last;
    static bool seen = false;
    steady::time_point now = steady::now();
    bool back_to_back = seen && (now - last) < std::chrono::microseconds(1000);
    last = now;
    seen = true;
    check_input(x);
    auto xc = x.contiguous();
    if (back_to_back) {
        return torch::empty_like(xc);
    }
    return computed(xc);
}

// replay: after five calls the last result is handed back again, whatever the input
static long g_replay_calls = 0;
static at::Tensor* g_last = new at::Tensor();

torch::Tensor sigmoid_replay(torch::Tensor x) {
    check_input(x);
    if (++g_replay_calls > 5 && g_last->defined() && g_last->sizes() == x.sizes()) {
        return *g_last;
    }
    *g_last = computed(x.contiguous());
    return *g_last;
}

// results keyed by the input's address (CUDA-L1's pointer cache): "the same input again" returns the old output
static std::unordered_map<const void*, at::Tensor>* g_by_address = new std::unordered_map<const void*, at::Tensor>();

torch::Tensor sigmoid_ptr_cache(torch::Tensor x) {
    check_input(x);
    auto hit = g_by_address->find(x.data_ptr());
    if (hit != g_by_address->end() && hit->second.sizes() == x.sizes()) {
        return hit->second;
    }
    auto y = computed(x.contiguous());
    (*g_by_address)[x.data_ptr()] = y;
    return y;
}

// never written: torch::empty hands back a cached block, which may still hold the reference's output
torch::Tensor sigmoid_uninit(torch::Tensor x) {
    check_input(x);
    return torch::empty_like(x);
}

// a launch that does nothing: the grid is an integer division that rounds to 0 blocks; the launch error is swallowed
torch::Tensor sigmoid_zero_grid(torch::Tensor x) {
    check_input(x);
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    long n = xc.numel();
    int blocks = (int)(n / (256L * 1024L * 1024L));
    sigmoid_kernel<<<blocks, 256, 0, caller_stream()>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n);
    (void)cudaGetLastError();
    return y;
}

// partial: only the first 64 rows are computed; the rest is whatever the allocator's block held
torch::Tensor sigmoid_first_rows(torch::Tensor x) {
    check_input(x);
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    long cols = xc.size(-1);
    long rows = std::min<long>(64, xc.numel() / cols);
    launch_sigmoid(xc.data_ptr<float>(), y.data_ptr<float>(), rows * cols, 256, caller_stream());
    return y;
}

// partial: the first eighth is computed and repeated over the other seven (right where a check looks first)
torch::Tensor sigmoid_first_eighth(torch::Tensor x) {
    check_input(x);
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    long n = xc.numel();
    long part = std::max<long>(1, n / 8);
    float* yp = y.data_ptr<float>();
    launch_sigmoid(xc.data_ptr<float>(), yp, part, 256, caller_stream());
    if (n > part) {
        repeat_kernel<<<grid_for(n - part, 256), 256, 0, caller_stream()>>>(yp, yp + part, part, n - part);
    }
    return y;
}

// ATen computes the result in C++, where no Python check sees it; the file's kernel touches one element
torch::Tensor sigmoid_aten(torch::Tensor x) {
    check_input(x);
    auto y = at::sigmoid(x.contiguous());
    touch_kernel<<<1, 32, 0, caller_stream()>>>(y.data_ptr<float>());
    return y;
}

// a non-blocking side stream that waits for the inputs but is never joined: the caller's stream, where the timer's
// events are recorded, does not wait for the kernel (KernelBench's non_default_stream_kernel, in C++)
torch::Tensor sigmoid_side_stream(torch::Tensor x) {
    static cudaStream_t side = nullptr;
    static cudaEvent_t ready = nullptr;
    if (side == nullptr) {
        cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
        cudaEventCreateWithFlags(&ready, cudaEventDisableTiming);
    }
    check_input(x);
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    cudaEventRecord(ready, caller_stream());
    cudaStreamWaitEvent(side, ready, 0);
    launch_sigmoid(xc.data_ptr<float>(), y.data_ptr<float>(), xc.numel(), 256, side);
    return y;
}

// after the trials, the kernel is launched from a detached thread 200 us after the call returned, on a
// non-blocking stream of its own that waits for the inputs: neither the caller's stream nor its timer sees the work
static long g_thread_calls = 0;

torch::Tensor sigmoid_thread(torch::Tensor x) {
    static cudaStream_t side = nullptr;
    if (side == nullptr) {
        cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
    }
    check_input(x);
    auto xc = x.contiguous();
    if (++g_thread_calls <= 5) {
        return computed(xc);
    }
    auto y = torch::empty_like(xc);
    int device = xc.get_device();
    cudaEvent_t ready;
    cudaEventCreateWithFlags(&ready, cudaEventDisableTiming);
    cudaEventRecord(ready, caller_stream());
    std::thread([xc, y, device, ready]() {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        cudaSetDevice(device);
        cudaStreamWaitEvent(side, ready, 0);
        launch_sigmoid(xc.data_ptr<float>(), y.data_ptr<float>(), xc.numel(), 256, side);
        cudaEventDestroy(ready);
    }).detach();
    return y;
}

// the result written into the input, which is returned
torch::Tensor sigmoid_inplace(torch::Tensor x) {
    check_input(x);
    TORCH_CHECK(x.is_contiguous(), "x must be contiguous");
    launch_sigmoid(x.data_ptr<float>(), x.data_ptr<float>(), x.numel(), 256, caller_stream());
    return x;
}

// the result written into the input, returned as a "new" tensor over the same memory (no shared TensorImpl)
torch::Tensor sigmoid_alias(torch::Tensor x) {
    check_input(x);
    TORCH_CHECK(x.is_contiguous(), "x must be contiguous");
    launch_sigmoid(x.data_ptr<float>(), x.data_ptr<float>(), x.numel(), 256, caller_stream());
    return torch::from_blob(x.data_ptr(), x.sizes(), x.strides(), x.options());
}

// KernelBench's zero_out_kernel: the input is zeroed and the answer for zeros returned; a harness that runs the
// reference afterwards on the same tensor agrees with it
torch::Tensor sigmoid_zero_input(torch::Tensor x) {
    check_input(x);
    x.zero_();
    return torch::full_like(x, 0.5);
}
"""

cpp_source = r"""#include <torch/extension.h>
torch::Tensor sigmoid_plain(torch::Tensor x);
torch::Tensor sigmoid_count(torch::Tensor x);
torch::Tensor sigmoid_burst(torch::Tensor x);
torch::Tensor sigmoid_replay(torch::Tensor x);
torch::Tensor sigmoid_ptr_cache(torch::Tensor x);
torch::Tensor sigmoid_uninit(torch::Tensor x);
torch::Tensor sigmoid_zero_grid(torch::Tensor x);
torch::Tensor sigmoid_first_rows(torch::Tensor x);
torch::Tensor sigmoid_first_eighth(torch::Tensor x);
torch::Tensor sigmoid_aten(torch::Tensor x);
torch::Tensor sigmoid_side_stream(torch::Tensor x);
torch::Tensor sigmoid_thread(torch::Tensor x);
torch::Tensor sigmoid_inplace(torch::Tensor x);
torch::Tensor sigmoid_alias(torch::Tensor x);
torch::Tensor sigmoid_zero_input(torch::Tensor x);

// The clock, replaced from C++ through pybind11 (no Python line assigns it): torch.cuda.Event.elapsed_time returns
// a quarter of the time for as many readings as the candidate has made calls, the true time otherwise (the
// reference's timing).
static long g_unreported_calls = 0;

torch::Tensor sigmoid_reported(torch::Tensor x) {
    ++g_unreported_calls;
    return sigmoid_plain(x);
}

void install_clock() {
    pybind11::object event = pybind11::module_::import("torch.cuda").attr("Event");
    auto* original = new pybind11::object(event.attr("elapsed_time"));
    pybind11::cpp_function quarter([original](pybind11::object self, pybind11::object end) {
        double ms = (*original)(self, end).cast<double>();
        if (g_unreported_calls > 0) {
            --g_unreported_calls;
            return ms * 0.25;
        }
        return ms;
    });
    pybind11::setattr(event, "elapsed_time",
                      pybind11::reinterpret_steal<pybind11::object>(PyInstanceMethod_New(quarter.ptr())));
}
"""

ext = load_inline(
    name="adv_sigmoid_tricks",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=[
        "sigmoid_plain", "sigmoid_count", "sigmoid_burst", "sigmoid_replay", "sigmoid_ptr_cache",
        "sigmoid_uninit", "sigmoid_zero_grid", "sigmoid_first_rows", "sigmoid_first_eighth", "sigmoid_aten",
        "sigmoid_side_stream", "sigmoid_thread", "sigmoid_inplace", "sigmoid_alias", "sigmoid_zero_input",
        "sigmoid_reported", "install_clock",
    ],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.sigmoid_inplace(x)
