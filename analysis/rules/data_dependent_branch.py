"""CL203: a branch on loaded data around enough work that divergence, if the data splits a warp, costs; and a
reduction over a partition of the warp by loaded data, which runs once per distinct label."""

from __future__ import annotations

from collections.abc import Iterator

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.assumptions import NO_FACTS
from cudalens.analysis.findings import Finding, Severity
from cudalens.analysis.model import KernelModel, inlined_from, sites, statement_cost
from cudalens.analysis.rule_base import Rule
from cudalens.analysis.rules.divergent_branch import register_only
from cudalens.analysis.values import DATA, THREAD_DEPS

HEAVY_DATA_BODY = 5  # a loop, or several statements: cheap bodies are predicated
CHEAP_OPERATIONS = 16  # operators, stores and arithmetic calls in arms without loads, loops or calls: a few dozen
_OPERATIONS = ("binary_expression", "unary_expression", "assignment_expression", "update_expression",
               "call_expression")


def operations(arms: list) -> int:
    """The operators, assignments and calls in `arms`: about the instructions they issue."""
    return sum(n.type in _OPERATIONS for arm in arms for n in ts.walk(arm))


class DataDependentBranch(Rule):
    """## What it does
    Reports an `if` whose condition depends on loaded data (`if (x[i] > 0)`) and that guards a loop or
    several statements. Whether the lanes of a warp agree depends on the values, which static analysis
    cannot see. Also reports an integer `cg::reduce` over a partition of the warp whose label is loaded data
    (`cg::reduce(cg::labeled_partition(active, bucket), v, cg::greater<int>())`, or a `binary_partition`): the
    data split the warp there as a branch would.

    ## Why is this bad?
    When neighbouring elements take different paths, each warp runs both: with random data and an
    expensive branch, up to half the throughput. Sorted or clustered data keeps warps uniform.
    An integer reduction over a partition is one `redux.sync` on the group's mask (sm_80 and later, for
    `plus`, `less`, `greater` and the bit operators); lanes whose masks differ cannot take it together, so the
    warp runs it for one subgroup after another, once per distinct label. cuda-samples' warpAggregatedAtomicsCG
    (5 buckets, random) measures 6 instructions per warp on the reduction's line at 10.7 active lanes on an
    H200, and the subgroups stay apart after it: the leader's `if` that follows runs at the same 10.7 lanes.
    With a distinct label in every lane, it runs 32 times.

    ## Known problems
    Always `info`: the cost depends on the data. `cudalens profile` shows the measured threads per
    instruction on these lines. A branch whose bodies only compute in registers (a sorting network's
    compare-and-swap, which nvcc turns into selects; a conversion's `else if` chain of casts and bit operations,
    which it branches over one to three ALU instructions at a time) is not reported: no heavy work. Nor is one
    whose arms only compute in registers and store, with no load, loop or call other than register arithmetic
    (`__popc`, `fminf`, `make_float3`), in at most 16 operators, stores and such calls: kaolin's `if (pmax ==
    0) { occupied[i] = 0; state[i] = 0; } else if … else …`, an insertion's popc and four stores, one division
    and three FMAs. Whether nvcc predicates them or branches (SASS, sm_90: the outer arm of that chain is a
    `BRA`, its inner ones predicated), a diverged warp spends those few instructions, not heavy work (fixture
    CL2_divergence.cu's `classify`). A decision tree whose leaves return constants or what they compute
    (bitsandbytes' FP4/NF4 quantizers: `if (x > 0.64f) { if (x > 0.86f) return 0b1111; else return 0b1110; }
    …`, most pairs ending in `selp`) counts alike (fixture CL2_divergence.cu's `code_of`). An arm that gathers
    (`colours[state[i]]`) or loops is reported. Neither is a branch on CUTLASS/CuTe's
    `elect_one_sync()`: it is true in one lane of each warp, a choice of lane, not of data (fixture
    CL2_warp_uniform.cu); nor one on `g.thread_rank() == 0` of a coalesced group or a partition of the warp
    (`cg::labeled_partition(warp, camera)`): the leader of each group that writes what the group reduced,
    however much it writes (fixture CL2_partition_leaders.cu). Nor a branch on data every thread of the block reads alike: a value loaded from one
    address, or a size the threads update together under a condition on such a value (a QR sweep's
    `if (h[top * n + top] == 0) top--;`): the whole block takes one side (fixture CL1_uniform_outcome.cu). Nor a
    branch on a warp vote over data (`if (__all_sync(m, v > 0))`, `__any_sync`): one value in every lane of a warp
    (tests/analysis/test_warp_vote.py). Nor a branch on a value the compiler fixes: a non-type template argument
    (from each kernel's instantiation, a default, an enum value the analyzer cannot evaluate), a literal or an
    address (`&dw`) passed to an inlined helper, a `constexpr`, an `if constexpr`: the same in every thread of
    the grid. `pdw && FILTER_MODE == LINEAR` is false where the forward kernel passes 0, true where the gradient
    kernel passes `&dw`; `corner = CUBE_MODE && (tc.x < 0)` is a constant false in the 2D-texture kernels and
    loaded data only in the cube ones, so a branch on it is reported for those kernels alone, named in the
    finding's `kernels` and its calls (fixture CL2_compile_time_constants.cu).
    A branch whose body is short is not reported even when the body calls a helper that
    re-gathers the active lanes (`if (src[i] > 0) dst[atomicAggInc(nres)] = src[i];` with
    `cg::coalesced_threads()` inside): that is code written for a divergent warp, a filter whose lanes
    without an element have nothing to do, and the idle share is the data's (20 % there, measured).
    A reduction over a partition is reported only for a label on loaded data and an integer type whose
    reduction is `redux.sync`: a `float` sum is a shuffle reduction, not seen to split the warp (a shuffle over
    the same kind of group, `labeledGroup.shfl(res, 0)`, runs at 32 active lanes on the H200), and a label
    from the thread index (`threadIdx.x / 8`) is a split the code fixes, not the data's: outside this rule,
    and not measured yet (a `tiled_partition<8>` says the same without a `match.any`; fixture
    CL2_partitioned_reduce.cu). The finding names the statement after the reduction, which the subgroups
    run apart, and, for one inside a helper, the kernel's call.

    ## Example
    ```cuda
    float v = in[i];
    if (v > 1.0f) {
        for (int r = 0; r < 32; ++r) v = refine(v);
    }
    ```

    ## Use instead
    Make the work branch-free where it is cheap (compute both, select), compact the elements that need the
    heavy path into a separate list processed by a second kernel, or sort/bucket the data. For a reduction
    per label: sort or group the elements by label first, so that a warp holds few labels, or, where most
    warps hold many, one atomic per lane costs less than a pass per label.

    ## Fix safety
    No automatic fix.

    ## References
    - CUDA C++ Best Practices Guide, "Branching and Divergence"
    """

    code = "CL203"
    name = "data-dependent-branch"
    summary = ("Branch on loaded data around heavy work, or a reduction per data label: divergence depends on "
               "the values")
    depends_on = NO_FACTS  # what splits the warp is the data, not the launch
    default_severity = Severity.INFO

    def check(self, kernel: KernelModel) -> Iterator[Finding]:
        def keep(b) -> bool:
            return b.kind == "if" and DATA in b.deps

        for per_run in sites(kernel, "branches", keep).values():
            if not per_run[0]:
                continue
            node = per_run[0][0].node
            arms = [a for a in (node.child_by_field_name(f) for f in ("consequence", "alternative")) if a is not None]
            cost = sum(statement_cost(a) for a in arms)
            if cost < HEAVY_DATA_BODY or register_only(node) or (
                    register_only(node, stores=True) and operations(arms) <= CHEAP_OPERATIONS):
                continue  # short bodies are predicated; arms of a few register operations, stores, returns are cheap
            also = " and the thread index" if per_run[0][0].deps & THREAD_DEPS else ""
            yield kernel.finding(
                type(self), per_run[0][0].at or node.child_by_field_name("condition") or node,
                f"Branch on loaded data{also} around heavy work: if neighbouring elements disagree, each warp runs "
                f"both paths (profile to see the measured divergence on this line)",
                related=inlined_from(*per_run[0]), evidence={"body_statements": cost},
            )
        for per_run in sites(kernel, "split_collectives").values():
            if not per_run[0]:
                continue
            first = per_run[0][0]
            after = next_statement(first.node)
            apart = ((after, "the subgroups stay apart after the reduction: this runs once per subgroup too"),
                     ) if after is not None else ()
            label = f"`{first.label}`"
            yield kernel.finding(
                type(self), first.node,
                f"Reduction over a partition of the warp by {label}, which follows loaded data: the lanes with each "
                f"distinct value of {label} are a subgroup, and the warp runs the reduction (`redux.sync`) for one "
                f"subgroup after another, so its cost grows with the number of distinct labels a warp holds (profile "
                f"to see the measured divergence on this line)",
                related=apart + inlined_from(*per_run[0]),
            )


def next_statement(node):
    """The statement after the one that holds `node`, in the same block, or None."""
    while node.parent is not None and node.parent.type != "compound_statement":
        node = node.parent
    after = node.next_named_sibling
    while after is not None and after.type == "comment":
        after = after.next_named_sibling
    return after
