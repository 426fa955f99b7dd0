"""CL803: ptxas spilled a kernel's registers to local memory (reported by cudalens.profiler)."""

from __future__ import annotations

from cudalens.analysis.rule_base import Rule


class RegisterSpills(Rule):
    """## What it does
    Reports a kernel for which ptxas (`-Xptxas -v`) reports spill stores or loads: values that did not fit in
    the registers it was allowed and live in per-thread local memory instead. The finding carries the
    registers, spill bytes and stack frame as evidence.

    ## Why is this bad?
    Local memory is off-chip (cached in L1/L2): every spill is a memory instruction where a register access
    would have been free, and in a loop it can dominate the kernel's run time.

    ## Known problems
    Small spills outside hot loops cost little; ptxas does not say where the spills are. Spills forced by
    `__launch_bounds__` or `-maxrregcount` may be a deliberate trade for occupancy.

    ## Example
    ```cuda
    __global__ void __launch_bounds__(1024, 2) k(...) {
        float acc[64];                       // indexed dynamically: lives in local memory
        for (int k = 0; k < 64; ++k) s += acc[(k * 7 + n) & 63];
    }
    ```

    ## Use instead
    Index per-thread arrays with compile-time constants (unrolled loops) so they stay in registers, keep
    fewer values live, or relax `__launch_bounds__` / `-maxrregcount`.

    ## Fix safety
    No automatic fix.

    ## References
    - CUDA C++ Best Practices Guide, "Registers" and "Local Memory"
    """

    code = "CL803"
    name = "register-spills"
    summary = "Kernel spills registers to local memory"
    source = "compiler"
