"""CL701: a global atomic that every lane of a warp, in every block, aims at the same address."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.assumptions import ALL_FACTS
from cudalens.analysis.findings import Finding, Severity
from cudalens.analysis.memory import warps
from cudalens.analysis.model import KernelModel, sites
from cudalens.analysis.rule_base import Rule
from cudalens.analysis.syntax import lineage
from cudalens.analysis.tickets import one_ticket_holder
from cudalens.analysis.values import BID, DATA, STAND_IN, THREAD_DEPS, UNIFORM

_LANE_VARYING = THREAD_DEPS | {DATA}  # a block's index is one value for all its lanes
# atomics whose old value each lane uses (a lock, a flag, a ticket): no reduction can stand in for them
_NOT_REDUCIBLE = ("atomicExch", "atomicCAS", "atomicInc", "atomicDec")


def contended_lanes(accesses: list) -> int:
    """The most lanes of one warp that hit a single address together (0 when no warp has two)."""
    most = 0
    for a in accesses:
        for w in warps(len(a.mask)):
            lanes = a.mask[w]
            if lanes.sum() < 2:
                continue
            addr = a.addr[w][lanes]
            if np.all(addr == addr[0]):
                most = max(most, int(lanes.sum()))
    return most


def data_guarded(node, kernel: KernelModel) -> bool:
    """Whether a branch around `node` depends on loaded data (then how many lanes get there is unknown)."""
    enclosing = {(n.start_byte, n.end_byte) for n in lineage(node, kernel.function.body)[1:]}
    return any(DATA in b.deps for run in kernel.runs for b in run.branches
               if (b.node.start_byte, b.node.end_byte) in enclosing)


class SingleAddressGlobalAtomic(Rule):
    """## What it does
    Flags a global-memory atomic (`atomicAdd(&out[0], v)`, `atomicMax(result, v)`) where all active lanes of
    a warp target the same address, and that address depends on neither the thread nor the block index: every
    thread of the grid updates one word. Also when the address depends only on the block
    (`atomicAdd(&out[blockIdx.y], v)`) or on a value every thread loaded from one place (`int g = ids[j];`
    from shared memory, then `atomicAdd(&grad[g], v)`, as in a tile-based rasteriser's backward pass): then
    every thread of a block updates one word.

    ## Why is this bad?
    Atomics to one address are serialised by the L2 cache: a grid of a million threads performs a million
    read-modify-write operations one after another on a single slice of L2, while the rest of the GPU waits.
    A reduction in registers and shared memory first (warp shuffles, then one value per block) cuts the
    atomics by the block size — 256× or more — and turns a serial bottleneck into parallel work.

    ## Known problems
    The lanes are simulated for the launch's block shape (or the usual ones when it is unknown); behind a
    condition on loaded data (`if (in[i] > 0)`) the finding is `info`, as the lanes that get there are unknown.
    Atomics whose address depends on loaded data that differs between lanes (histograms) are not reported here.
    `atomicExch`, `atomicCAS`, `atomicInc` and `atomicDec` are not accumulations, so the advice for them is one
    lane per warp, not a reduction. The compiler may combine
    some integer atomics with a uniform address and operand inside a warp; the contention between warps and
    blocks remains. One lane per warp or per block doing the atomic (`if (threadIdx.x == 0)`) is the
    recommended pattern and is not reported; nor is one lane per group the data leave active, under any
    condition (a warp-aggregated atomic): the leader of a coalesced group, tile or labelled partition
    (`g.thread_rank() == 0`), the lowest lane of `__activemask()` or a ballot (`lane == __ffs(votes) - 1`),
    `elect_one_sync()`. A helper named like an atomic (`atomicAggInc`) is followed into, not taken for one
    atomic per lane. Nor is an atomic that only the holder of one ticket reaches (`if (cell == N)` after
    `cell = atomicAdd(bottom, -1) - 1`: a fetch-and-add hands each value out once, so one thread of the grid
    gets there, where the counter is one the threads share and the ticket is unchanged since; fixture
    CL7_tickets.cu, definition in analysis/tickets.py).

    ## Example
    ```cuda
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(total, in[i]);
    ```

    ## Use instead
    ```cuda
    float v = i < n ? in[i] : 0.f;
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_down_sync(0xffffffff, v, offset);
    __shared__ float partial[32];
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < blockDim.x / 32 ? partial[threadIdx.x] : 0.f;
        for (int offset = 16; offset > 0; offset /= 2)
            v += __shfl_down_sync(0xffffffff, v, offset);
        if (threadIdx.x == 0) atomicAdd(total, v);      // one atomic per block
    }
    ```

    ## Fix safety
    No automatic fix: the reduction needs the block's structure, and floating-point sums change their last
    bits with the order of additions.

    ## References
    - CUDA C++ Programming Guide, "Atomic Functions"
    - NVIDIA Developer Blog, "Faster Parallel Reductions on Kepler" and "CUDA Pro Tip: Optimized Filtering with
      Warp-Aggregated Atomics"
    """

    code = "CL701"
    name = "single-address-global-atomic"
    summary = "Global atomic on one address from every thread of the grid"
    depends_on = ALL_FACTS  # which lanes reach the atomic

    def check(self, kernel: KernelModel) -> Iterator[Finding]:
        def keep(a) -> bool:
            # (an address from a stand-in for loaded data says nothing about which word, unless every thread
            # loaded it from one address: values.STAND_IN, UNIFORM)
            return a.atomic and a.space == "global" and a.addr is not None and not (a.deps & _LANE_VARYING) \
                and (STAND_IN not in a.deps or UNIFORM in a.deps)

        for per_run in sites(kernel, "accesses", keep).values():
            lanes = [contended_lanes(run) for run in per_run]
            executed = [bool(run) for run in per_run]
            first = next((a for run in per_run for a in run), None)
            if not any(lanes) or first is None or one_ticket_holder(first.node, kernel):
                continue
            message = f"Atomic on `{first.base}` hits one address from {max(lanes)} lanes of a warp, " + (
                "and from every thread of its block: the block's threads serialise on that word"
                if first.deps & {BID, STAND_IN} else
                "in every block: all threads of the grid serialise on that word")
            function = first.node.child_by_field_name("function") if first.node.type == "call_expression" else None
            if function is not None and ts.text(function).startswith(_NOT_REDUCIBLE):
                message += (f"; `{ts.text(function)}` is not an accumulation, so no reduction replaces it: let one "
                            "lane per warp do it, and broadcast what it returns (`__shfl_sync`) where the others "
                            "need it")
            else:
                message += "; reduce in the warp (shuffles) and the block first, then do one atomic per block"
            severity = Severity.WARNING
            if data_guarded(first.node, kernel) or not all(a.exact_mask for run in per_run for a in run):
                severity = Severity.INFO  # (or a `continue` on loaded data before it)
                message += " (how many lanes get there depends on the data)"
            elif not all(n for n, ran in zip(lanes, executed, strict=True) if ran):
                severity = Severity.INFO
                labels = [c.label for c, n, ran in zip(kernel.configs, lanes, executed, strict=True) if ran and not n]
                message += f" (not with {', '.join(labels)})"
            yield kernel.finding(type(self), first.node, message, severity,
                                 holds=[bool(n) or not ran for n, ran in zip(lanes, executed, strict=True)],
                                 stated=[n if ran else lanes[0] for n, ran in zip(lanes, executed, strict=True)],
                                 evidence={"lanes_per_address": max(lanes)})
