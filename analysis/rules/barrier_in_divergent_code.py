"""CL302: `__syncthreads()` reached by only some threads of the block."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from cudalens.analysis.assumptions import ALL_FACTS
from cudalens.analysis.findings import Finding, Severity
from cudalens.analysis.model import KernelModel, describe_deps, sites
from cudalens.analysis.rule_base import Rule
from cudalens.analysis.values import THREAD_DEPS


def _threads_waiting_elsewhere(run) -> dict[tuple[int, int], tuple[int, object]]:
    """Per barrier site: how many threads skip it (under thread-dependent control flow) and then reach a later
    barrier, where they wait for threads that are held at this one. Threads that skip a barrier and leave the
    kernel are not counted: on sm_70 and later exited threads no longer take part in the barrier, and
    `compute-sanitizer --tool synccheck` reports nothing for them (measured on an H200)."""
    out: dict[tuple[int, int], tuple[int, object]] = {}
    barriers = run.barriers
    for i, b in enumerate(barriers):
        if not b.cond_deps & THREAD_DEPS:
            continue
        skipping = b.alive & ~b.mask
        waits_at = next((other.node for other in barriers[i + 1:] if (other.mask & skipping).any()), None)
        if waits_at is None:
            continue
        later = np.zeros_like(b.mask)
        for other in barriers[i + 1:]:
            later |= other.mask
        key = (b.node.start_byte, b.node.end_byte)
        count = int((skipping & later).sum())
        if count > out.get(key, (0, None))[0]:
            out[key] = (count, waits_at)
    return out


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
    Conditions on loaded data are not reported (whether they diverge depends on the data). Threads that skip
    the barrier and then leave the kernel (return, or reach its end) are not counted: on sm_70 and later
    exited threads drop out of the barrier, and compute-sanitizer's synccheck does not report them.

    ## Example
    ```cuda
    if (threadIdx.x < 128) {
        smem[threadIdx.x] = in[i];
        __syncthreads();          // threads 128.. never arrive here...
    }
    __syncthreads();              // ...they wait here instead
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
    depends_on = ALL_FACTS  # which threads of the block reach the barrier
    default_severity = Severity.ERROR

    def check(self, kernel: KernelModel) -> Iterator[Finding]:
        waiting = [_threads_waiting_elsewhere(run) for run in kernel.runs]
        for key, per_run in sites(kernel, "barriers").items():
            missing = [w.get(key, (0, None))[0] for w in waiting]
            waits_at = waiting[0].get(key, (0, None))[1]
            if not missing[0]:
                continue
            b = per_run[0][0]
            total = int(b.alive.sum())
            yield kernel.finding(
                type(self), b.node,
                f"`{b.name}()` sits under control flow that depends on {describe_deps(b.cond_deps)}: "
                f"{missing[0]} of {total} threads skip it and wait at a later barrier instead, so the block "
                f"deadlocks or the barriers pair up wrongly",
                Severity.ERROR if all(missing) else Severity.INFO, holds=[bool(m) for m in missing],
                stated=[m and (m, int(run[0].alive.sum())) for m, run in zip(missing, per_run, strict=True)],
                evidence={"threads_missing": missing[0], "threads_in_block": total},
                related=((waits_at, "the skipping threads wait at this barrier instead"),) if waits_at is not None
                else (),
            )
