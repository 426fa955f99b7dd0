"""CL903: the kernel is slower than the eager PyTorch reference (reported by cudalens.profiler)."""

from __future__ import annotations

from cudalens.analysis.rule_base import Rule


class SlowerThanReference(Rule):
    """## What it does
    Reports that a kernel that passed its correctness test runs slower than the PyTorch reference on the
    same inputs: the median of CUDA-event timings after a warm-up, with the L2 cache flushed before every
    repetition. The finding gives the slowdown and both medians, and any warning of the timing (a spread over
    10 % of the median means the figures are noisy).

    ## Why is this bad?
    A custom kernel exists to be faster than what PyTorch already does; one that is slower costs build time,
    maintenance and risk for nothing. PyTorch's own kernels (cuBLAS, cuDNN, fused elementwise) are hard to beat
    without tiling, coalescing and enough parallelism.

    ## Known problems
    Timings on a busy or throttling GPU are noisy: read the warnings. Very short kernels are dominated by launch
    overhead on both sides. Only the inputs of `get_inputs()` are timed.

    ## Example
    ```cuda
    // one thread per output row of a matrix product, reading B column-wise
    for (int k = 0; k < n; ++k) acc += a[row * n + k] * b[k * n + col];
    ```

    ## Use instead
    Follow the Judge's verdict (CL910) and the per-line profile hints (CL904): stage tiles in shared memory,
    make accesses coalesced, give each thread more work — or keep PyTorch's operator.

    ## Fix safety
    No automatic fix; "Optimize kernel" runs the Coder–Judge loop to find a faster correct version.

    ## References
    - KernelBench, "fast_p" metric
    - CUDA C++ Best Practices Guide, "Performance Metrics" — Timing
    """

    code = "CL903"
    name = "slower-than-reference"
    summary = "Kernel slower than the PyTorch reference"
    source = "runtime"
