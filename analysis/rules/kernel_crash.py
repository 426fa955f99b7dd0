"""CL902: the kernel crashed (illegal address, launch failure) or did not finish (reported by cudalens.profiler)."""

from __future__ import annotations

from cudalens.analysis.findings import Severity
from cudalens.analysis.rule_base import Rule


class KernelCrash(Rule):
    """## What it does
    Reports that running the kernel killed its worker process or its CUDA context: an illegal memory access,
    a misaligned address, a failed launch (bad configuration, too many resources), a device-side assert, or a
    run that did not finish within the worker's timeout (a deadlock at a barrier, an endless loop).

    ## Why is this bad?
    An illegal access corrupts the CUDA context: every later CUDA call of the process fails, so in a training
    job one bad kernel takes the whole run down. A kernel that hangs blocks the GPU until the process is
    killed. cudalens runs each job in its own process with a timeout so the editor survives; your program
    will not.

    ## Known problems
    The message is the CUDA error string and the last line of the worker's error output; it rarely names the
    line. Run "Validate" (compute-sanitizer, CL905) to find the access that faulted.

    ## Example
    ```cuda
    __shared__ float tile[32][32];
    tile[threadIdx.y][threadIdx.x] = in[row * n + col];   // no bounds check on row/col
    ```

    ## Use instead
    ```cuda
    __shared__ float tile[32][32];
    tile[threadIdx.y][threadIdx.x] = (row < n && col < n) ? in[row * n + col] : 0.f;
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - CUDA C++ Programming Guide, "Error Checking"
    - compute-sanitizer documentation, "Memcheck Tool"
    """

    code = "CL902"
    name = "kernel-crash"
    summary = "Kernel crashed (illegal access, failed launch) or timed out"
    default_severity = Severity.ERROR
    source = "runtime"
