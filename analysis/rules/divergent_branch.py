"""CL201: a branch whose condition splits the lanes of a warp, around enough work to matter."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.assumptions import ALL_FACTS
from cudalens.analysis.findings import Finding, Severity
from cudalens.analysis.memory import warps
from cudalens.analysis.model import KernelModel, describe_deps, sites, statement_cost
from cudalens.analysis.rule_base import Rule
from cudalens.analysis.values import DATA

HEAVY_BODY = 3  # statements; shorter bodies are predicated by the compiler at little cost
HEAVY_PART_WARP = 5  # a loop or five statements: a part-warp branch that costs more than its boundary warp


_NOT_SELECTS = {"call_expression", "subscript_expression", "for_statement", "while_statement", "do_statement",
                "return_statement", "break_statement", "continue_statement", "goto_statement"}


def register_only(node) -> bool:
    """Whether an if's branches only move values between variables (`t = a; a = b; b = t;`, a sorting
    network's compare-and-swap): nvcc turns them into selects, so no lane waits for another (no memory
    access, call, loop or jump in them)."""
    stack = [c for c in (node.child_by_field_name("consequence"), node.child_by_field_name("alternative"))
             if c is not None]
    while stack:
        n = stack.pop()
        if n.type in _NOT_SELECTS or (n.type == "pointer_expression" and ts.text(n).startswith("*")) or (
                n.type == "field_expression" and "->" in ts.text(n)):
            return False
        stack.extend(n.named_children)
    return True


def whole_warp_takes(branches: list) -> bool:
    """Whether some warp takes the branch with all its active lanes (then the split warps are the boundary)."""
    for b in branches:
        if b.cond is None:
            continue
        for w in warps(len(b.mask)):
            active = b.mask[w]
            if active.any() and np.all(b.cond[w][active] != 0):
                return True
    return False


def warp_split(branches: list) -> tuple[int, int, bool] | None:
    """(lanes taking the branch, active lanes, taken lanes not contiguous) of the first divergent warp."""
    for b in branches:
        if b.cond is None:
            continue
        for w in warps(len(b.mask)):
            active = b.mask[w]
            taken = (b.cond[w] != 0) & active
            n_taken, n_active = int(taken.sum()), int(active.sum())
            if 0 < n_taken < n_active:
                lanes = np.flatnonzero(taken)
                return n_taken, n_active, bool(lanes[-1] - lanes[0] + 1 != lanes.size)
    return None


class DivergentBranch(Rule):
    """## What it does
    Flags an `if`/`switch` whose condition differs between lanes of the same warp and that guards real work
    (several statements or a loop).

    ## Why is this bad?
    A warp executes both sides of a divergent branch one after the other, with the lanes of the other side
    idle: a heavy body under `threadIdx.x % 2` runs at half throughput. Interleaved patterns also keep every
    warp busy where a contiguous split (`threadIdx.x < n/2`) would retire whole warps.

    ## Known problems
    A bare bounds check (`if (i < n)`), a branch on the warp index (`threadIdx.x / 32`) and a single lane
    doing a short epilogue (`if (lane == 0) out[w] = sum;`) are not reported: they cost little or nothing.
    Neither is an `if` without `else` taken by contiguous lanes (`if (tid < k) { ... }`): the other lanes
    have nothing to run, and only the one warp that straddles `k` is split — unless no warp takes it whole
    and the body is heavy (a loop: `if (warp == 0 && lane < nwarps) { for ... }`), where the work itself runs
    on part of a warp. Without `else`, interleaved lanes are reported (every warp runs the body at part
    throughput).
    Short bodies are not reported either: nvcc turns them into predicated instructions, and the warp does not
    diverge (the interleaved reduction `if (tid % (2 * s) == 0) s[tid] += s[tid + s];` measures 32 active
    lanes on an H200; its cost is the idle predicated lanes and the bank conflicts, not divergence), nor
    are bodies that only move values between variables (a compare-and-swap: selects). Conditions on loaded data are not reported: their divergence depends on the data. A branch taken by a
    single lane (`if (threadIdx.x == 0) { ... }`) is the block's deliberate serial part and is not reported.

    ## Example
    ```cuda
    for (int s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    ```

    ## Use instead
    Map the work to contiguous lanes so whole warps take the same path:
    ```cuda
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    ```

    ## Fix safety
    No automatic fix: remapping work to lanes changes the algorithm.

    ## References
    - CUDA C++ Best Practices Guide, "Branching and Divergence"
    - Mark Harris, "Optimizing Parallel Reduction in CUDA"
    """

    code = "CL201"
    name = "divergent-branch"
    summary = "Branch that splits the lanes of a warp around non-trivial work"
    depends_on = ALL_FACTS  # which lanes of a warp take the branch

    def check(self, kernel: KernelModel) -> Iterator[Finding]:
        def keep(b) -> bool:
            return b.kind in ("if", "switch") and DATA not in b.deps and b.cond is not None

        for per_run in sites(kernel, "branches", keep).values():
            splits = [warp_split(run) for run in per_run]
            if splits[0] is None:
                continue
            node = per_run[0][0].node
            body_cost = sum(statement_cost(node.child_by_field_name(f)) for f in ("consequence", "alternative")) \
                if node.type == "if_statement" else statement_cost(node.child_by_field_name("body"))
            taken, active, interleaved = splits[0]
            if taken == 1:
                continue  # one lane doing the block's serial part (`if (threadIdx.x == 0)`) is deliberate
            if body_cost < HEAVY_BODY or (node.type == "if_statement" and register_only(node)):
                continue  # nvcc predicates short bodies and turns swaps into selects: the lanes stay active
            one_path = node.type == "if_statement" and node.child_by_field_name("alternative") is None
            part_warp = one_path and not interleaved
            if part_warp and (body_cost < HEAVY_PART_WARP or any(whole_warp_takes(run) for run in per_run)):
                continue  # `if (tid < k) {...}`: the other lanes have nothing to run; only the warp at k is split
            cond = node.child_by_field_name("condition") or node
            severity = Severity.WARNING if all(s is not None for s in splits) else Severity.INFO
            deps = describe_deps(per_run[0][0].deps)
            if part_warp:
                message = (f"Part of a warp does this work: {taken} of {active} lanes take the branch (the "
                           f"condition depends on {deps}) and no warp takes it whole, so the body runs with "
                           f"{active - taken} lanes idle; spread the work over the warp's lanes")
            elif one_path:
                message = (f"Interleaved branch: {taken} of {active} lanes of every warp take it (the condition "
                           f"depends on {deps}), so each warp runs the body with the other lanes idle; map the "
                           "work to contiguous lanes so whole warps skip it")
            else:
                pattern = "interleaved " if interleaved else ""
                message = (f"Divergent branch: {taken} of {active} {pattern}lanes of a warp take it (the condition "
                           f"depends on {deps}), so the warp runs both paths one after the other")
            yield kernel.finding(type(self), per_run[0][0].at or cond, message, severity,
                                 holds=[s is not None for s in splits], evidence={
                "lanes_taken": taken, "lanes_active": active, "body_statements": body_cost})
