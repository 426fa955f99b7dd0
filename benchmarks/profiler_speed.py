"""Print how long the profiler's no-GPU steps and the worker take: compile cold and warm, worker start, a job
round trip, and importing torch (and opening the CUDA context, on a GPU machine) in a fresh worker.

    python benchmarks/profiler_speed.py            # fast compile path (torch host code blanked)
    python benchmarks/profiler_speed.py --full     # also a load_inline-equivalent build with torch headers
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from cudalens.profiler.compile import CompileOptions, compile_python
from cudalens.worker.child.protocol import JobRequest
from cudalens.worker.pool import Worker, WorkerPool

MODEL_NEW = '''
import torch
from torch.utils.cpp_extension import load_inline

cuda_source = """
__global__ void relu_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}
torch::Tensor relu(torch::Tensor x) {
    auto y = torch::empty_like(x);
    relu_kernel<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
"""
relu = load_inline(name="relu", cpp_sources="torch::Tensor relu(torch::Tensor x);",
                   cuda_sources=cuda_source, functions=["relu"])
'''


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def compile_figures(full: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "model_new.py")
        modes = [("fast (host code blanked)", "auto")] + ([("full (torch headers)", "always")] if full else [])
        for label, torch_headers in modes:
            options = CompileOptions(cache_dir=str(Path(tmp) / f"cache-{torch_headers}"), torch_headers=torch_headers)
            cold, result = timed(lambda: compile_python(path, MODEL_NEW, options))  # noqa: B023
            warm = [timed(lambda: compile_python(path, MODEL_NEW, options))[0] for _ in range(5)]  # noqa: B023
            kernels = ", ".join(f"{k.short_name}: {k.registers} regs" for k in result.kernels)
            print(f"compile {label}: cold {cold:.2f} s, warm (cache hit) median {statistics.median(warm) * 1e3:.1f} ms"
                  f"  [{kernels}; ok={result.ok}]")


def worker_figures() -> None:
    worker = Worker()
    hello_s, hello = timed(worker.start)
    print(f"worker start to handshake: {hello_s * 1e3:.0f} ms  (python {hello.python}, torch {hello.torch}, "
          f"CUDA {hello.torch_cuda}, driver {hello.driver}, GPU {hello.gpu})")
    trips = [timed(lambda i=i: worker.run(JobRequest(str(i), "echo", {"i": i}, 30)))[0] for i in range(20)]
    print(f"job round trip (echo): median {statistics.median(trips) * 1e3:.2f} ms")
    worker.close()
    pool = WorkerPool(warmup={"modules": ["torch"], "cuda": True})
    try:
        seconds, _ = timed(pool.start)
        detail = pool.warmup_result.payload if pool.warmup_result else {}
        print(f"fresh worker with torch imported (and CUDA context): {seconds:.2f} s  {detail}")
        crash_s, _ = timed(lambda: pool.run(JobRequest("c", "echo", {"action": "segfault"}, 30)))
        again_s, _ = timed(lambda: pool.run(JobRequest("d", "echo", {}, 30)))
        print(f"segfault reported in {crash_s * 1e3:.0f} ms; next job on a fresh warmed worker {again_s:.2f} s")
    finally:
        pool.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--full", action="store_true", help="also time a build with the torch headers")
    args = parser.parse_args()
    compile_figures(args.full)
    worker_figures()
    return 0


if __name__ == "__main__":
    sys.exit(main())
