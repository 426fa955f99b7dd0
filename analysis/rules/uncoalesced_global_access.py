"""CL101: global loads and stores whose lanes are not neighbours in memory."""

from __future__ import annotations

from collections.abc import Iterator

from cudalens.analysis.assumptions import ALL_FACTS
from cudalens.analysis.findings import Finding, Severity
from cudalens.analysis.memory import GlobalRequest, worst_global
from cudalens.analysis.model import KernelModel, sites
from cudalens.analysis.rule_base import Rule

MIN_EXCESS = 2.0  # at least twice the sectors that contiguous lanes would need


def worst_request(accesses: list) -> GlobalRequest | None:
    return worst_global(accesses)


def is_uncoalesced(r: GlobalRequest | None) -> bool:
    return r is not None and r.excess_ratio >= MIN_EXCESS and r.sectors > 4


def _stride_text(r: GlobalRequest, size: int, deps: frozenset[str], kernel: KernelModel) -> str:
    if not r.stride_bytes or r.stride_bytes % size:
        return "at irregular offsets"
    elements = r.stride_bytes // size
    params = sorted(d.split(":", 1)[1] for d in deps if d.startswith("param:"))
    sample = kernel.configs[0].param_sample
    if len(params) == 1 and abs(elements) == sample:
        return f"`{params[0]}` elements apart"
    if params and abs(elements) >= sample:
        return f"{elements} elements apart when {', '.join(params)} = {sample}"
    return f"{elements} elements ({r.stride_bytes} B) apart"


def _global_sites(kernel: KernelModel) -> list[tuple[list[list], list[GlobalRequest | None]]]:
    def keep(a) -> bool:
        return a.space == "global" and not a.atomic and a.addr is not None and a.struct_size is None

    return [(per_run, [worst_request(run) for run in per_run]) for per_run in sites(kernel, "accesses", keep).values()]


_PLANE = frozenset(("tid.x", "tid.y"))


def transpose_partner(kernel: KernelModel, access) -> object | None:
    """A coalesced global access of the same kernel that uses the same two thread indices the other way round:
    the signature of a transpose, whose fix is staging a tile through shared memory."""
    if not _PLANE <= access.deps:
        return None
    for per_run, requests in _global_sites(kernel):
        other = next((a for run in per_run for a in run), None)
        if other is None or other.node == access.node or not _PLANE <= other.deps:
            continue
        if requests[0] is not None and not is_uncoalesced(requests[0]) and other.write != access.write:
            return other
    return None


class UncoalescedGlobalAccess(Rule):
    """## What it does
    Flags a global-memory load or store where consecutive lanes of a warp do not access consecutive
    elements, so one warp instruction touches more 32-byte sectors than the data it moves needs. The message
    gives the stride between lanes and the sectors per request against the ideal.

    ## Why is this bad?
    Global memory is served in 32-byte sectors. When the 32 lanes of a warp read 32 neighbouring floats, the
    request needs 4 sectors; when they are 2 elements apart it needs 8, and when they are a row apart it needs
    32 — up to 8× the memory traffic for the same work. Memory-bound kernels slow down by the same factor.

    ## Known problems
    Lanes are simulated for the block shape found at the launch site (or, when none is visible, for the usual
    shapes); integer parameters are sampled. When the stride depends on a run-time value that is never
    compared against an index (so it may be 1), the finding is `info`.

    ## Example
    ```cuda
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    out[x * height + y] = in[y * width + x];   // the store: lanes are `height` floats apart
    ```

    ## Use instead
    Make `threadIdx.x` the fastest-varying index of every access, or stage the tile through shared memory:
    ```cuda
    tile[threadIdx.y][threadIdx.x] = in[y * width + x];
    __syncthreads();
    out[(bx + threadIdx.y) * height + by + threadIdx.x] = tile[threadIdx.x][threadIdx.y];
    ```

    ## Fix safety
    No automatic fix: reordering indices changes which thread computes what.

    ## References
    - CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory"
    - Nsight Compute, "L1TEX Global Load/Store Access Pattern" rule (sectors per request)
    """

    code = "CL101"
    name = "uncoalesced-global-access"
    summary = "Global access whose lanes are not consecutive elements (more sectors per request)"
    depends_on = ALL_FACTS  # the warp shape, element sizes and strides

    def check(self, kernel: KernelModel) -> Iterator[Finding]:
        for per_run, requests in _global_sites(kernel):
            flagged = [is_uncoalesced(r) for r in requests]
            if not flagged[0] and not any(flagged):
                continue
            first = next(a for run in per_run for a in run)
            if (transpose_partner(kernel, first) is not None) != (self.code == "CL103"):
                continue  # a transpose is reported as CL103, which names the fix; anything else as CL101
            r = next(r for r, f in zip(requests, flagged, strict=True) if f)
            assert r is not None
            runtime = first.deps and {d for d in first.deps if d.startswith("param:")}
            unproven_params = {d.split(":", 1)[1] for d in (runtime or ())} - kernel.dimension_params
            stride = _stride_text(r, first.size, first.deps, kernel)
            kind = "store to" if first.write else "load from"
            message = self.describe(kernel, first, kind, stride, r)
            severity = Severity.WARNING
            if not all(flagged):
                labels = [c.label for c, f in zip(kernel.configs, flagged, strict=True) if not f]
                severity = Severity.INFO
                message += f" (not with {', '.join(labels)})"
            elif unproven_params:
                severity = Severity.INFO
                message += f" (the stride depends on {', '.join(sorted(unproven_params))} at run time)"
            yield kernel.finding(type(self), first.node, message, severity, related=self.related(kernel, first),
                                 holds=flagged, evidence={
                "sectors_per_request": r.sectors, "ideal_sectors": r.ideal,
                "stride_bytes": r.stride_bytes or 0, "element_bytes": first.size,
                "block": "×".join(map(str, kernel.configs[0].block)),
            })

    def describe(self, kernel: KernelModel, access, kind: str, stride: str, r: GlobalRequest) -> str:
        return (f"Uncoalesced global {kind} `{access.base}`: consecutive lanes are {stride}, so a warp request "
                f"touches {r.sectors} sectors where {r.ideal} would do")

    def related(self, kernel: KernelModel, access) -> tuple:
        return ()
