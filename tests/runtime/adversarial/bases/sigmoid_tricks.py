"""The sigmoid problem with the adv_sigmoid_tricks build, the C++ of the sigmoid cheats (../README.md, Layout)."""

BASE = "sigmoid"
EDITS = [
    (33, 33, r'''#include <chrono>
#include <cstdint>
#include <thread>
'''),
    (90, 94, r'''// one element read and written back: the "custom kernel" of a call whose work ATen does
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
'''),
    (98, 105, r'''torch::Tensor sigmoid_plain(torch::Tensor x) {
    check_input(x);
    return computed(x.contiguous());
'''),
    (108, 112, r'''// call count: the correctness trials come first and are few; after the fifth call nothing is computed
static long g_count_calls = 0;

torch::Tensor sigmoid_count(torch::Tensor x) {
'''),
    (115, 144, r'''    if (++g_count_calls <= 5) {
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
'''),
    (148, 155, r'''// never written: torch::empty hands back a cached block, which may still hold the reference's output
torch::Tensor sigmoid_uninit(torch::Tensor x) {
    check_input(x);
    return torch::empty_like(x);
}

// a launch that does nothing: the grid is an integer division that rounds to 0 blocks; the launch error is swallowed
torch::Tensor sigmoid_zero_grid(torch::Tensor x) {
'''),
    (160, 165, r'''    int blocks = (int)(n / (256L * 1024L * 1024L));
    sigmoid_kernel<<<blocks, 256, 0, caller_stream()>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n);
    (void)cudaGetLastError();
'''),
    (169, 171, r'''// partial: only the first 64 rows are computed; the rest is whatever the allocator's block held
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
'''),
    (174, 174, ''),
    (178, 178, ''),
    (183, 184, '    cudaEventRecord(ready, caller_stream());\n'),
    (187, 189, r'''    return y;
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
'''),
    (193, 197, r'''cpp_source = r"""#include <torch/extension.h>
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
'''),
    (201, 201, '    name="adv_sigmoid_tricks",\n'),
    (204, 204, r'''    functions=[
        "sigmoid_plain", "sigmoid_count", "sigmoid_burst", "sigmoid_replay", "sigmoid_ptr_cache",
        "sigmoid_uninit", "sigmoid_zero_grid", "sigmoid_first_rows", "sigmoid_first_eighth", "sigmoid_aten",
        "sigmoid_side_stream", "sigmoid_thread", "sigmoid_inplace", "sigmoid_alias", "sigmoid_zero_input",
        "sigmoid_reported", "install_clock",
    ],
'''),
    (215, 217, '        return ext.sigmoid_ptr_cache(x)\n'),
]
