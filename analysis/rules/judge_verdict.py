"""CL910: the Judge's verdict on a kernel (reported by cudalens.agents)."""

from __future__ import annotations

from cudalens.analysis.findings import Severity
from cudalens.analysis.rule_base import Rule


class JudgeVerdict(Rule):
    """## What it does
    Shows the Judge's verdict on a kernel, on the kernel's name. For a kernel that fails (does not compile,
    crashes, hangs, computes the wrong result, or games the test) it names the critical issue, why it matters and
    the minimal fix. For a correct kernel it names the bottleneck (memory-, compute-, latency- or occupancy-bound,
    from Nsight Compute's throughput percentages, the arithmetic intensity against the GPU's ridge point, warp
    stalls and occupancy limiters) and exactly one optimization method with a short plan, with the 3–4 metrics
    that justify it as evidence and the source lines they point to as related locations. Without a GPU run the
    verdict is *predicted* from the kernel's structure (coalescing, arithmetic intensity, occupancy, divergence,
    host transfers, atomics, barriers...) and labelled so.

    ## Why is this bad?
    It is not a defect but the next step: the one change most likely to make the kernel faster (or correct),
    chosen the way CudaForge's Judge chooses it, offline and deterministically.

    ## Known problems
    Predicted verdicts are estimates from static features; a profile on the GPU can name a different bottleneck.
    A verdict concerns the launch that was profiled: other input shapes can be limited by something else.

    ## Example
    ```cuda
    __global__ void transpose(const float* in, float* out, int n) {
        int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
        out[x * n + y] = in[y * n + x];   // Judge: memory-bound → coalesce global memory accesses
    }
    ```

    ## Use instead
    Follow the verdict's plan, or run "Optimize kernel" to let the Coder apply it round after round.

    ## Fix safety
    No automatic fix; "Optimize kernel" offers a tested candidate as an edit you apply.

    ## References
    - CudaForge: Coder–Judge kernel optimization (arXiv 2511.01884)
    - Nsight Compute, "Speed Of Light" and "Occupancy" sections
    - CUDAPerf: structural features predictive of CUDA kernel performance
    """

    code = "CL910"
    name = "judge-verdict"
    summary = "The Judge's verdict: critical issue, or bottleneck and one next step"
    default_severity = Severity.INFO
    source = "judge"
