"""CL203: a branch on loaded data around enough work that divergence, if the data splits a warp, costs."""

from __future__ import annotations

from collections.abc import Iterator

from cudalens.analysis.assumptions import NO_FACTS
from cudalens.analysis.findings import Finding, Severity
from cudalens.analysis.model import KernelModel, inlined_from, sites, statement_cost
from cudalens.analysis.rule_base import Rule
from cudalens.analysis.rules.divergent_branch import register_only
from cudalens.analysis.values import DATA, THREAD_DEPS

HEAVY_DATA_BODY = 5  # a loop, or several statements: cheap bodies are predicated


class DataDependentBranch(Rule):
    """## What it does
    Reports an `if` whose condition depends on loaded data (`if (x[i] > 0)`) and that guards a loop or
    several statements. Whether the lanes of a warp agree depends on the values, which static analysis
    cannot see.

    ## Why is this bad?
    When neighbouring elements take different paths, each warp runs both: with random data and an
    expensive branch, up to half the throughput. Sorted or clustered data keeps warps uniform.

    ## Known problems
    Always `info`: the cost depends on the data. `cudalens profile` shows the measured threads per
    instruction on these lines. A branch whose bodies only move values between variables (a sorting network's
    compare-and-swap) is not reported: nvcc turns it into selects. Neither is a branch on CUTLASS/CuTe's
    `elect_one_sync()`: it is true in one lane of each warp, a choice of lane, not of data (fixture
    CL2_warp_uniform.cu).

    ## Example
    ```cuda
    float v = in[i];
    if (v > 1.0f) {
        for (int r = 0; r < 32; ++r) v = refine(v);
    }
    ```

    ## Use instead
    Make the work branch-free where it is cheap (compute both, select), compact the elements that need the
    heavy path into a separate list processed by a second kernel, or sort/bucket the data.

    ## Fix safety
    No automatic fix.

    ## References
    - CUDA C++ Best Practices Guide, "Branching and Divergence"
    """

    code = "CL203"
    name = "data-dependent-branch"
    summary = "Branch on loaded data around heavy work: divergence depends on the values"
    depends_on = NO_FACTS  # what splits the warp is the data, not the launch
    default_severity = Severity.INFO

    def check(self, kernel: KernelModel) -> Iterator[Finding]:
        def keep(b) -> bool:
            return b.kind == "if" and DATA in b.deps

        for per_run in sites(kernel, "branches", keep).values():
            if not per_run[0]:
                continue
            node = per_run[0][0].node
            cost = sum(statement_cost(node.child_by_field_name(f)) for f in ("consequence", "alternative"))
            if cost < HEAVY_DATA_BODY or register_only(node):
                continue  # short bodies are predicated, swaps of registers become selects
            also = " and the thread index" if per_run[0][0].deps & THREAD_DEPS else ""
            yield kernel.finding(
                type(self), per_run[0][0].at or node.child_by_field_name("condition") or node,
                f"Branch on loaded data{also} around heavy work: if neighbouring elements disagree, each warp runs "
                f"both paths (profile to see the measured divergence on this line)",
                related=inlined_from(*per_run[0]), evidence={"body_statements": cost},
            )
