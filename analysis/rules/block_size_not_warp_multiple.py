"""CL401: blocks whose thread count is not a multiple of the warp size, so the last warp runs part-empty."""

from __future__ import annotations

from collections.abc import Iterator

from cudalens.analysis.assumptions import NO_FACTS
from cudalens.analysis.file_context import FileContext
from cudalens.analysis.findings import Finding
from cudalens.analysis.launch_limits import (
    MAX_THREADS_PER_BLOCK,
    WARP_SIZE,
    block_text,
    max_threads_bound,
    threads,
)
from cudalens.analysis.model import KernelModel
from cudalens.analysis.rule_base import Rule


def idle_lanes(count: int) -> int:
    return -count % WARP_SIZE


def _waste(count: int) -> str:
    warps = -(-count // WARP_SIZE)
    idle = idle_lanes(count)
    return (f"each block runs {warps} warp{'s' if warps > 1 else ''} with {idle} idle lane{'s' if idle > 1 else ''} "
            f"({100 * idle // (warps * WARP_SIZE)} % of its lanes)")


class BlockSizeNotWarpMultiple(Rule):
    """## What it does
    Flags a kernel launch whose constant block size (x·y·z threads) is not a multiple of 32, and a
    `__launch_bounds__(N)` whose `N` is not a multiple of 32. The message gives the idle lanes per block.

    ## Why is this bad?
    The GPU schedules threads in warps of 32. A block of 100 threads occupies 4 warps, and the last one runs
    with 28 of its 32 lanes masked off: those lanes still take issue slots, registers and a warp slot of the
    SM's limited supply, so the occupancy and throughput you get are those of 128 threads doing the work of
    100.

    ## Known problems
    Only block sizes that are compile-time constants at the launch site (literals, macros, `const` values,
    `dim3` variables initialised with them) are checked. A single-thread launch (`<<<1, 1>>>`) is taken as
    deliberate and not reported, and so is a launch in a `case` of a switch over the block size (cuda-samples'
    reductions dispatch `case 512:` … `case 1:`; the small blocks serve small inputs).

    ## Example
    ```cuda
    dim3 block(10, 10);                     // 100 threads: 4 warps, 28 lanes idle
    kernel<<<grid, block>>>(in, out, n);
    ```

    ## Use instead
    ```cuda
    dim3 block(32, 4);                      // 128 threads: 4 full warps
    kernel<<<grid, block>>>(in, out, n);
    ```

    ## Fix safety
    No automatic fix: the grid size and the kernel's index arithmetic usually assume the block shape.

    ## References
    - CUDA C++ Best Practices Guide, "Thread and Block Heuristics"
    - CUDA C++ Programming Guide, "SIMT Architecture"
    """

    code = "CL401"
    name = "block-size-not-warp-multiple"
    summary = "Block size (or __launch_bounds__) not a multiple of the 32-thread warp"
    depends_on = NO_FACTS  # launch sites and `__launch_bounds__` as written

    def check(self, kernel: KernelModel) -> Iterator[Finding]:
        bound = max_threads_bound(kernel.unit, kernel.function)
        if bound is None:
            return
        node, value = bound
        if 1 < value <= MAX_THREADS_PER_BLOCK and idle_lanes(value):
            yield kernel.finding(
                type(self), node,
                f"`__launch_bounds__({value})`: {value} threads is not a multiple of {WARP_SIZE}; at that size "
                + _waste(value),
                evidence={"threads": value, "idle_lanes": idle_lanes(value)})

    def check_unit(self, unit: FileContext) -> Iterator[Finding]:
        for launch, config in unit.launches():
            if config.block is None or len(launch.config) < 2 or config.dispatched:
                continue  # (a `case 16:` of a switch over block sizes serves small inputs: a choice, not a slip)
            count = threads(config.block)
            if not 1 < count <= MAX_THREADS_PER_BLOCK or not idle_lanes(count):
                continue
            yield unit.finding(
                type(self), launch.config[1],
                f"Block of {block_text(config.block)} for `{launch.kernel}` is not a multiple of "
                f"{WARP_SIZE}: " + _waste(count),
                kernel=launch.kernel,
                evidence={"threads": count, "idle_lanes": idle_lanes(count),
                          "block": "×".join(map(str, config.block))})
