"""CL904: Nsight Compute's per-line counters point at a costly line (reported by cudalens.profiler)."""

from __future__ import annotations

from cudalens.analysis.findings import Severity
from cudalens.analysis.rule_base import Rule


class ProfileLineHint(Rule):
    """## What it does
    Reports, on a source line, what Nsight Compute measured there (source counters, built with `-lineinfo`)
    when it is a large share of the kernel's traffic or instructions: most of the line's global-memory sectors
    are excess (uncoalesced), many of its shared-memory wavefronts are bank-conflict replays, or few of the 32
    threads execute its instructions (divergence). The evidence carries the counters.

    ## Why is this bad?
    These are the measured costs the static rules (CL101, CL301, CL201) predict; a line that carries most of a
    kernel's excess sectors or replays is where an optimisation pays. `warning` when more than half of the
    line's traffic is waste, `info` otherwise.

    ## Known problems
    Counters are attributed to lines through the compiler's line table: inlined helpers and macros land on
    their call site, and heavily unrolled loops on their header. Lines that take under a few percent of the
    kernel are not reported. Profiling needs a GPU and `ncu` (run with `--clock-control none`).

    ## Example
    ```cuda
    out[x * height + y] = in[y * width + x];   // 87 % of this line's sectors are excess
    ```

    ## Use instead
    ```cuda
    tile[threadIdx.y][threadIdx.x] = in[y * width + x];
    __syncthreads();
    out[(bx + threadIdx.y) * height + by + threadIdx.x] = tile[threadIdx.x][threadIdx.y];
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - Nsight Compute documentation, "Source Counters" and "Memory Workload Analysis"
    - Nsight Compute CLI, `--import-source`, `--section SourceCounters`
    """

    code = "CL904"
    name = "profile-line-hint"
    summary = "Profiler counters show a costly line (excess sectors, bank conflicts, divergence)"
    default_severity = Severity.INFO
    source = "runtime"
