"""The optimization methods the Judge may pick (exactly one per verdict), each with a short modification plan.

Plans are data so the Judge, the prompts and the documentation all say the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Method:
    key: str
    title: str
    plan: tuple[str, ...]


METHODS: dict[str, Method] = {
    m.key: m
    for m in (
        Method(
            "coalesce-global-access",
            "Coalesce global memory accesses",
            (
                "Make consecutive threads (threadIdx.x) touch consecutive addresses: index the fastest-varying "
                "dimension with threadIdx.x.",
                "Where the access pattern is inherently strided (a transpose, a column walk), stage the tile through "
                "shared memory and read/write it row-wise.",
                "Keep the result identical; re-check bounds guards after re-indexing.",
            ),
        ),
        Method(
            "vectorize-memory-access",
            "Vectorize and streamline memory traffic",
            (
                "Load and store with 128-bit vector types (float4) where alignment allows, with a scalar tail.",
                "Use a grid-stride loop sized to a few waves of blocks per SM instead of one element per thread.",
                "Fuse neighbouring element-wise work into this pass so each byte crosses DRAM once.",
            ),
        ),
        Method(
            "tile-in-shared-memory",
            "Reuse data through shared-memory tiles",
            (
                "Load tiles of the reused operands into shared memory once per block, with __syncthreads() between "
                "loading and computing.",
                "Let each thread compute a small register tile (e.g. 4×4 outputs) from the shared tiles.",
                "Choose tile sizes that keep the block's shared memory within the occupancy budget.",
            ),
        ),
        Method(
            "use-tensor-cores",
            "Move the math to tensor cores",
            (
                "Compute the inner products with WMMA/mma.sync (TF32 for fp32 data, fp16/bf16 where allowed) on "
                "16×16×8 fragments.",
                "Stage A and B tiles in shared memory laid out for the fragment loads; keep accumulation in fp32.",
                "Check the tolerance: TF32 changes rounding, so compare against the reference at its dtype's limit.",
            ),
        ),
        Method(
            "pad-shared-memory",
            "Remove shared-memory bank conflicts",
            (
                "Pad the shared array's row by one element (e.g. [32][33]) or swizzle the column index so a warp's "
                "accesses fall in distinct banks.",
                "Keep the indexing of loads and stores consistent with the new layout.",
            ),
        ),
        Method(
            "remove-warp-divergence",
            "Remove warp divergence",
            (
                "Make the branch condition uniform across a warp (branch on blockIdx or warp index, not threadIdx "
                "parity), or compute both sides and select.",
                "Move rare slow paths out of the hot loop; use predication (ternaries) for short branches.",
            ),
        ),
        Method(
            "reduce-register-pressure",
            "Reduce register pressure to raise occupancy",
            (
                "Add __launch_bounds__(threads, minBlocks) so ptxas caps registers per thread.",
                "Shorten live ranges: recompute cheap values, avoid large per-thread arrays, unroll less.",
                "Verify with ptxas -v that spills stay at zero.",
            ),
        ),
        Method(
            "reduce-shared-memory",
            "Reduce shared memory per block to raise occupancy",
            (
                "Shrink the tiles or reuse one buffer for both phases, so more blocks fit on an SM.",
                "Prefer registers (warp shuffles) for data only one warp needs.",
            ),
        ),
        Method(
            "increase-parallelism",
            "Expose more parallelism",
            (
                "Launch enough blocks for several waves on all SMs (split the reduction or the tile dimension).",
                "Use a block size that is a multiple of 32, typically 128–256 threads.",
            ),
        ),
        Method(
            "hide-memory-latency",
            "Hide memory latency with more independent work",
            (
                "Give each thread several independent loads in flight (unroll the loop, prefetch the next "
                "iteration's data into registers).",
                "Double-buffer shared-memory tiles so loading the next tile overlaps computing the current one.",
            ),
        ),
        Method(
            "use-warp-shuffles",
            "Replace barriers and atomics with warp-level primitives",
            (
                "Reduce within a warp with __shfl_down_sync, then combine warps through one small shared array.",
                "Keep one atomic (or one store) per block instead of one per thread.",
            ),
        ),
        Method(
            "reduce-instruction-count",
            "Cut instructions in the hot loop",
            (
                "Hoist index arithmetic and loop-invariant loads out of the loop; use fused multiply-add.",
                "Use fast intrinsics (__expf, __fdividef, rsqrtf) where the tolerance allows.",
            ),
        ),
        Method(
            "fuse-kernel-launches",
            "Fuse many short launches into one",
            (
                "Do the work of the repeated launches in one kernel (a loop inside the kernel, or one grid over "
                "all the pieces), so launch overhead is paid once.",
                "Where the launches must stay separate, capture them in a CUDA graph and replay it.",
            ),
        ),
        Method(
            "avoid-host-synchronization",
            "Remove host-side transfers and synchronization",
            (
                "Keep data on the device between launches; drop .cpu()/.item() and cudaMemcpy in the hot path.",
                "Fuse consecutive launches into one kernel where they share data.",
            ),
        ),
    )
}
