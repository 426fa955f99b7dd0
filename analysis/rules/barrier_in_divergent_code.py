"""CL302: `__syncthreads()` reached by only some threads of the block."""

from __future__ import annotations

from collections.abc import Iterator

from cudalens.analysis.findings import Finding, Severity
from cudalens.analysis.model import KernelModel, describe_deps, sites
from cudalens.analysis.rule_base import Rule
from cudalens.analysis.values import THREAD_DEPS


class BarrierInDivergentCode(Rule):
    """## What it does
    Flags a block-wide barrier (`__syncthreads()` and its `_count/_and/_or` forms) that sits under control
    flow that depends on the thread index — inside `if (threadIdx.x < 16)`, or in a loop whose trip count
    differs between threads — so some threads of the block never reach it.

    ## Why is this bad?
    Every non-exited thread of the block must reach the same barrier. When only some do, the behaviour is
    undefined: the block hangs, or threads pass the barrier at different places and read shared memory
    that was not written yet. `compute-sanitizer --tool synccheck` reports it at run time.

    ## Known problems
    Conditions on loaded data are not reported (whether they diverge depends on the data). Threads that
    returned early are not counted as missing the barrier.

    ## Example
    ```cuda
    if (threadIdx.x < 128) {
        smem[threadIdx.x] = in[i];
        __syncthreads();          // threads 128.. never arrive
    }
    ```

    ## Use instead
    Move the barrier out of the branch so every thread reaches it:
    ```cuda
    if (threadIdx.x < 128) smem[threadIdx.x] = in[i];
    __syncthreads();
    ```

    ## Fix safety
    No automatic fix: moving a barrier changes which writes it orders.

    ## References
    - CUDA C++ Programming Guide, "Synchronization Functions" (`__syncthreads`)
    - compute-sanitizer, synccheck tool
    """

    code = "CL302"
    name = "barrier-in-divergent-code"
    summary = "__syncthreads() under thread-dependent control flow"
    default_severity = Severity.ERROR

    def check(self, kernel: KernelModel) -> Iterator[Finding]:
        for per_run in sites(kernel, "barriers").values():
            missing = []
            for run in per_run:
                count = 0
                for b in run:
                    if b.cond_deps & THREAD_DEPS:
                        count = max(count, int((b.alive & ~b.mask).sum()))
                missing.append(count)
            if not missing[0]:
                continue
            b = per_run[0][0]
            total = int(b.alive.sum())
            yield kernel.finding(
                type(self), b.node,
                f"`{b.name}()` is reached by only {total - missing[0]} of {total} threads of the block: it sits "
                f"under control flow that depends on {describe_deps(b.cond_deps)}; the others never arrive",
                Severity.ERROR if all(missing) else Severity.INFO,
                evidence={"threads_missing": missing[0], "threads_in_block": total},
            )
