"""CL104: a global access whose address comes from loaded data (a gather or scatter)."""

from __future__ import annotations

from collections.abc import Iterator

from cudalens.analysis.assumptions import NO_FACTS
from cudalens.analysis.findings import Finding, Severity
from cudalens.analysis.model import KernelModel, sites
from cudalens.analysis.rule_base import Rule
from cudalens.analysis.values import DATA


class DataDependentGlobalAccess(Rule):
    """## What it does
    Reports a global load or store whose index is itself loaded from memory (`x[idx[i]]`), so whether the
    warp's request coalesces depends on the data, which static analysis cannot see.

    ## Why is this bad?
    Random gathers touch up to 32 sectors per request instead of 4. Often unavoidable (sparse matrices,
    embeddings); when the indices are sorted or clustered, the cost is low.

    ## Known problems
    Always `info`: the cost depends on the index values. Profile with `cudalens profile` to see the
    measured sectors per request on this line. Atomics are left out: the L2 performs them address by
    address, so what a scattered atomic costs is how many lanes meet on one word (CL701), not sectors
    (cuda-samples' `atomicAdd(&counter[bucket], n)` of a labelled partition). A static member read through
    a loaded variable (`packed.size` of a `x128 packed`) is the type's constant, not loaded data. Nor is an
    offset every thread of the block holds alike: loaded from one address, or a size the threads update
    together under a condition on such a value (`if (h[top * n + top] == 0) top--;` in a QR sweep):
    `h[top * n + threadIdx.x]` is a row the lanes read side by side, whatever `top` is (fixture
    CL1_uniform_outcome.cu). Nor is a prefix-sum compaction over a bitmask the warp shares (a tile's mask of
    active pixels, a ballot): `map[start + __popcll(mask & ((1ull << bit) - 1))]` in the lanes whose bit is set
    reads consecutive entries whatever the mask is (fixture CL1_compaction_rank.cu). Nor is a slot read from a
    running count at the thread's own element, where a scan in the file fills that buffer before the launch
    (`cub::DeviceScan::ExclusiveSum(…, flags, prefix_sum, n)`, thrust's or std's scans, `cumsum`; directly or
    through a host helper wrapping the scan): `if (flags[i]) out[prefix_sum[i]] = in[i];` is a compaction whose
    storing threads write consecutive slots whatever the flags are (analysis/running_counts.py; fixture
    CL1_running_count.cu). A name alone (`psum`) is no evidence, and the threads' slots are still the data's
    where a kernel walks from one count to the next (`for (j = row_ptr[r]; j < row_ptr[r + 1]; ++j)`, a CSR
    row) or a thread advances its slot under a condition of its own (`if (hits & (1 << c)) out[slot++] = …`:
    as many slots as its data say). A scan in another file than the launch, or one a kernel of the file
    computes, is not seen; a thread that writes several slots (eight children of an octree node) is followed
    as if every item added one, so what that spacing costs is not reported either.

    ## Example
    ```cuda
    out[i] = table[indices[i]];
    ```

    ## Use instead
    Sort or bucket the indices so neighbouring lanes read neighbouring rows; for small tables, stage them in
    shared memory; read rows as vectors (`float4`) when each lane gathers a whole row.

    ## Fix safety
    No automatic fix.

    ## References
    - CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory"
    """

    code = "CL104"
    name = "data-dependent-global-access"
    summary = "Gather/scatter: the address depends on loaded data"
    depends_on = NO_FACTS  # a gather is one whatever the launch
    default_severity = Severity.INFO

    def check(self, kernel: KernelModel) -> Iterator[Finding]:
        def keep(a) -> bool:
            return a.space == "global" and a.addr is None and DATA in a.deps and not a.atomic

        for per_run in sites(kernel, "accesses", keep).values():
            if not per_run[0]:
                continue
            a = per_run[0][0]
            kind = "store to" if a.write else "load from"
            yield kernel.finding(
                type(self), a.node,
                f"Data-dependent {kind} `{a.base}`: the address comes from loaded data, so coalescing depends on "
                f"the index values (profile to measure sectors per request)",
            )
