"""CL402: blocks larger than any GPU runs, or larger than the kernel's own `__launch_bounds__`."""

from __future__ import annotations

from collections.abc import Iterator

from cudalens.analysis.assumptions import NO_FACTS
from cudalens.analysis.file_context import FileContext
from cudalens.analysis.findings import Finding, Severity
from cudalens.analysis.launch_limits import (
    MAX_BLOCK_DIMS,
    MAX_THREADS_PER_BLOCK,
    block_text,
    max_threads_bound,
    threads,
)
from cudalens.analysis.model import KernelModel
from cudalens.analysis.rule_base import Rule


class BlockSizeOverLimit(Rule):
    """## What it does
    Flags a launch whose constant block has more than 1024 threads (or more than 1024 × 1024 × 64 along
    x, y, z), a launch whose block is larger than the `__launch_bounds__` maximum of the kernel it launches,
    and a `__launch_bounds__` maximum above 1024.

    ## Why is this bad?
    No NVIDIA GPU runs blocks of more than 1024 threads: the launch fails with
    `cudaErrorInvalidConfiguration`, the kernel never runs, and unless the launch is checked the program goes
    on with whatever the output buffer held. A launch above the kernel's own `__launch_bounds__` fails the same
    way (too many resources requested): the compiler allocated registers for at most that many threads. A
    bound above 1024 makes ptxas budget registers for a block that can never exist, which can force spills.

    ## Known problems
    Only constant block sizes are checked (literals, macros, `const` values, `dim3` variables initialised with
    them).

    ## Example
    ```cuda
    dim3 block(64, 32);                 // 2048 threads
    kernel<<<grid, block>>>(out, n);
    ```

    ## Use instead
    ```cuda
    dim3 block(32, 32);                 // 1024 threads, and a grid twice as large in x
    kernel<<<grid, block>>>(out, n);
    ```

    ## Fix safety
    No automatic fix: the grid and the kernel's indexing have to change with the block.

    ## References
    - CUDA C++ Programming Guide, "Thread Hierarchy" and "Features and Technical Specifications"
    - CUDA C++ Programming Guide, "Launch Bounds"
    """

    code = "CL402"
    name = "block-size-over-limit"
    summary = "Block larger than 1024 threads or than the kernel's __launch_bounds__"
    depends_on = NO_FACTS  # launch sites and `__launch_bounds__` as written
    default_severity = Severity.ERROR

    def check(self, kernel: KernelModel) -> Iterator[Finding]:
        bound = max_threads_bound(kernel.unit, kernel.function)
        if bound is not None and bound[1] > MAX_THREADS_PER_BLOCK:
            yield kernel.finding(
                type(self), bound[0],
                f"`__launch_bounds__({bound[1]})` is above the {MAX_THREADS_PER_BLOCK}-thread limit of every GPU: "
                "no such block can run, and ptxas budgets registers as if one could",
                Severity.WARNING, evidence={"max_threads": bound[1]})

    def check_unit(self, unit: FileContext) -> Iterator[Finding]:
        for launch, config in unit.launches():
            if config.block is None or len(launch.config) < 2:
                continue
            count = threads(config.block)
            shape = block_text(config.block)
            over_dim = [f"{'xyz'[i]} = {v} > {limit}" for i, (v, limit) in
                        enumerate(zip(config.block, MAX_BLOCK_DIMS, strict=True)) if v > limit]
            message, related = None, ()
            if count > MAX_THREADS_PER_BLOCK or over_dim:
                reason = f"more than {MAX_THREADS_PER_BLOCK} threads" if count > MAX_THREADS_PER_BLOCK \
                    else ", ".join(over_dim)
                message = (f"Block of {shape} for `{launch.kernel}` is over the per-block limit ({reason}): the "
                           "launch fails with cudaErrorInvalidConfiguration and the kernel never runs")
            else:
                kernel = unit.kernel(launch.kernel)
                bound = max_threads_bound(unit.unit, kernel) if kernel is not None else None
                if bound is not None and count > bound[1]:
                    related = ((bound[0], "the kernel's launch bound"),)
                    message = (f"Block of {shape} is above `{launch.kernel}`'s "
                               f"`__launch_bounds__({bound[1]})`: the launch fails "
                               "(too many resources requested) and the kernel never runs")
            if message:
                yield unit.finding(type(self), launch.config[1], message, kernel=launch.kernel,
                                   evidence={"threads": count, "block": "×".join(map(str, config.block))}, related=related)
