"""CL804: a kernel's resources allow fewer than half the SM's warps (reported by cudalens.profiler)."""

from __future__ import annotations

from cudalens.analysis.rule_base import Rule


class LowTheoreticalOccupancy(Rule):
    """## What it does
    For a kernel whose block size the analyzer found at its launch sites, computes the theoretical occupancy
    from ptxas's registers and shared memory (the same arithmetic as CUDA's `cuda_occupancy.h`, for the
    target architecture) and reports when registers, shared memory or barriers hold it below 50 %. The
    message names the limiting resource and, for registers, how many per thread would reach 50 %.

    ## Why is this bad?
    Fewer resident warps leave the SM fewer warps to switch to while others wait on memory, so memory latency
    shows through; memory-bound kernels suffer most.

    ## Known problems
    Occupancy is a means, not a goal: a kernel that uses its registers for reuse (tiling, ILP) can be faster
    at lower occupancy. Dynamic shared memory is counted only when the launch passes a constant. Limits
    from the launch configuration alone (tiny blocks) are CL4xx findings, not this one.

    ## Example
    ```cuda
    heavy<<<n / 256, 256>>>(...);   // heavy uses 72 registers: 3 blocks, 24 of 64 warps on sm_90
    ```

    ## Use instead
    Cap registers with `__launch_bounds__(256, 4)`, keep fewer values live, use less shared memory per block
    (smaller tiles), or a different block size.

    ## Fix safety
    No automatic fix.

    ## References
    - CUDA C++ Programming Guide, "Occupancy Calculator" (`cuda_occupancy.h`)
    - Nsight Compute, "Occupancy" section
    """

    code = "CL804"
    name = "low-theoretical-occupancy"
    summary = "Resources limit theoretical occupancy below 50 %"
    source = "compiler"
