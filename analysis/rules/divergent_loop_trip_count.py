"""CL202: a loop whose trip count differs between lanes of a warp."""

from __future__ import annotations

from collections.abc import Iterator

from cudalens.analysis.assumptions import ALL_FACTS
from cudalens.analysis.findings import Finding, Severity
from cudalens.analysis.model import KernelModel, describe_deps, inlined_from, sites
from cudalens.analysis.rule_base import Rule
from cudalens.analysis.rules.divergent_branch import warp_split
from cudalens.analysis.values import follows_sample


def _repeats(records: list) -> bool:
    """Whether some lane runs the loop's body a second time (the trip counts then differ by more than the
    lanes that skip the loop entirely)."""
    return any(b.iteration > 0 and (b.cond.astype(bool) & b.mask).any() for b in records)


class DivergentLoopTripCount(Rule):
    """## What it does
    Flags a loop whose exit condition is reached by different lanes of a warp at different iterations
    (`for (int j = 0; j < threadIdx.x; ++j)`, per-row lengths indexed by lane).

    ## Why is this bad?
    The warp keeps iterating until its longest lane is done; the lanes that finished early sit idle. With
    a trip count proportional to the lane index, half the warp's issue slots are wasted on average.

    ## Known problems
    Trip counts that depend on loaded data (CSR row lengths) are not reported: how much they vary within a
    warp depends on the data. Strided loops (`for (int i = lane; i < n; i += 32)`, grid- and block-stride
    loops) are not reported either: their lanes differ by one iteration at most, the tail of the range, which
    no remapping avoids (llm.c's causal-attention loops `t2 <= t` are of this kind).

    ## Example
    ```cuda
    for (int j = 0; j <= threadIdx.x; ++j) acc += in[j];   // lane 31 iterates 32 times, lane 0 once
    ```

    ## Use instead
    Give every lane the same trip count and mask the tail, or let a whole warp cooperate on one item
    (lanes stride the inner loop).

    ## Fix safety
    No automatic fix.

    ## References
    - CUDA C++ Best Practices Guide, "Branching and Divergence"
    """

    code = "CL202"
    name = "divergent-loop-trip-count"
    summary = "Loop whose trip count varies within a warp"
    depends_on = ALL_FACTS  # which lanes of a warp keep iterating

    def check(self, kernel: KernelModel) -> Iterator[Finding]:
        def keep(b) -> bool:
            return b.kind == "loop" and not follows_sample(b.deps) and b.cond is not None and b.thread_dependent \
                and not b.strided  # a strided loop's lanes differ by one iteration at most: the range's tail

        for per_run in sites(kernel, "branches", keep).values():
            splits = [warp_split(run) for run in per_run]
            if splits[0] is None or not _repeats(per_run[0]):
                continue  # lanes that enter run the body once: a bounds check (`i < n` cutting a warp once)
            loop = per_run[0][0]
            cond = loop.node.child_by_field_name("condition") or loop.node
            continuing, active, _ = splits[0]
            severity = Severity.WARNING if all(s is not None for s in splits) else Severity.INFO
            yield kernel.finding(
                type(self), loop.at or cond,
                f"Loop trip count varies within a warp: after some iterations {continuing} of {active} lanes "
                f"continue while the rest idle (the bound depends on {describe_deps(loop.deps)})",
                severity, holds=[s is not None for s in splits], stated=[s and s[:2] for s in splits],
                related=inlined_from(*per_run[0]),
                evidence={"lanes_continuing": continuing, "lanes_active": active},
            )
