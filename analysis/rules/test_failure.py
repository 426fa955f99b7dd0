"""CL901: the kernel's output does not match the PyTorch reference (reported by cudalens.profiler)."""

from __future__ import annotations

from cudalens.analysis.findings import Severity
from cudalens.analysis.rule_base import Rule


class TestFailure(Rule):
    """## What it does
    Reports that the correctness test of a kernel failed: on at least one of the trials (fresh random inputs
    each, outputs poisoned before every run) the kernel's output differed from the PyTorch reference beyond the
    dtype's tolerance (fp32 1e-4, fp16/bf16 1e-2), had the wrong shape or dtype, or contained NaN/Inf. The
    finding carries the trial, its seed, the number of mismatches and the largest absolute and relative
    errors. The timing checks the same way: every timed call gets fresh inputs, and the last call of each
    batch and one chosen at random are compared with the reference on the same inputs (`check:
    timed-output-wrong`: the kernel changed behaviour between the trials and the timing — it skipped its work,
    or replayed a result remembered for an input). A speedup above 10× counts only when a fresh process with new
    seeds agrees (`not-reproduced` when it does not). It is also reported, as `info`, when the test passed but
    cannot tell right from wrong (a reference whose outputs are all zero or nearly so), and as `error` when the
    test could not run at all.

    ## Why is this bad?
    A fast kernel that computes the wrong answer is worth nothing, and a wrong answer that only shows on some
    inputs (a boundary that is not a multiple of the block size, a race that depends on timing) is the kind that
    reaches production. Poisoned outputs catch kernels that never write part of the result.

    ## Known problems
    The reference is the file's PyTorch `Model` (KernelBench layout) or the reference named for a `.cu` file;
    tolerances suit well-conditioned operations, and reductions over very long rows in fp16 may need a looser
    one. Random inputs can miss failures that need special values.

    ## Example
    ```cuda
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    y[i] = x[i] > 0.f ? x[i] : 0.f;          // no bounds check: writes past n, reads garbage
    ```

    ## Use instead
    ```cuda
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
    ```

    ## Fix safety
    No automatic fix; "Fix with Coder" can propose one from the failure's evidence.

    ## References
    - KernelBench, "Correctness evaluation" (multiple trials, tolerances)
    - cudalens docs: the correctness test (`cudalens test`)
    """

    __test__ = False  # not a pytest test class, whatever its name
    code = "CL901"
    name = "test-failure"
    summary = "Correctness test against the PyTorch reference failed"
    default_severity = Severity.ERROR
    source = "runtime"
