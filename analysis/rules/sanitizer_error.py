"""CL905: compute-sanitizer found an error at a line (reported by cudalens.profiler)."""

from __future__ import annotations

from cudalens.analysis.findings import Severity
from cudalens.analysis.rule_base import Rule


class SanitizerError(Rule):
    """## What it does
    Reports what compute-sanitizer found when the kernel ran ("Validate"): out-of-bounds or misaligned
    accesses (memcheck), shared-memory data races with their hazard counts (racecheck), and barriers that not
    all threads reach (synccheck) — on the line it names, with the thread and block.

    ## Why is this bad?
    These are bugs, measured on a real run: an out-of-bounds access may pass a test by luck and corrupt memory
    in production, a shared-memory race gives results that change with timing and hardware, and a divergent
    barrier is undefined behaviour that can hang the GPU.

    ## Known problems
    Only what the test inputs exercise is checked, and the kernel runs 10–100× slower under the sanitizer.
    Lines are those of the build's line table (`-lineinfo`); errors inside PyTorch's own kernels are left out.

    ## Example
    ```cuda
    __shared__ float s[256];
    s[threadIdx.x] = in[i];
    out[i] = s[255 - threadIdx.x];            // racecheck: read-after-write hazard, no __syncthreads()
    ```

    ## Use instead
    ```cuda
    __shared__ float s[256];
    s[threadIdx.x] = in[i];
    __syncthreads();
    out[i] = s[255 - threadIdx.x];
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - compute-sanitizer documentation: Memcheck, Racecheck, Synccheck
    """

    code = "CL905"
    name = "sanitizer-error"
    summary = "compute-sanitizer found a memory error, race or barrier error"
    default_severity = Severity.ERROR
    source = "runtime"
