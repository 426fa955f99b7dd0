"""CL907: PyTorch, not the file's kernel, computes the result (reported by cudalens.profiler's anti-cheat)."""

from __future__ import annotations

from cudalens.analysis.findings import Severity
from cudalens.analysis.rule_base import Rule


class PytorchFallback(Rule):
    """## What it does
    Reports a `ModelNew` whose result comes from PyTorch rather than from the CUDA kernel the file defines: a
    torch compute op in `ModelNew` (`torch.*`, `F.*`, `nn.<Layer>`, `@`; `check: torch-fallback`), a
    try/except that falls back to PyTorch (`try-except-fallback`), the reference `Model` inherited or called
    (`inherits-reference`, `calls-reference`), or, in the optimize loop, a file with no kernel at all
    (`no-custom-kernel`). At run time, whatever the C++ or Python calls: when the file's own kernels carry less
    than half of a timed call's device time (torch.profiler's kernels), the kernels that did the work are named
    with their shares (`library-kernels`: ATen, cuBLAS, cuDNN, Thrust or CUB built elsewhere, copies).

    ## Why is this bad?
    The correctness test then checks PyTorch against PyTorch: it passes whatever the kernel computes, and the
    timing measures torch's kernels (often beside a kernel launched for show).

    ## Known problems
    Structural uses (`nn.Parameter`, `nn.ModuleList`, `nn.init`) are not flagged. A file that defines no kernel
    is a PyTorch candidate, and `cudalens test` lets it use torch's ops; `--allow-torch-ops` allows them in a
    kernel file too (for a kernel that fuses only part of the model, say), and then the device time is not
    attributed either. A kernel counts as the file's own when its name is one of the file's `__global__`
    functions in a namespace the file declares; Thrust or CUB algorithms the file instantiates count as
    library kernels.

    ## Example
    ```python
    def forward(self, x):
        ext.swish(x)                 # launched, result dropped
        return x * torch.sigmoid(x)
    ```

    ## Use instead
    ```python
    def forward(self, x):
        return ext.swish(x)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - KernelBench, `kernel_static_checker.py` (torch computation ops, inheritance bypass, try/except fallback)
    - cudalens docs: the correctness test (`cudalens test`), "Anti-cheat"
    """

    code = "CL907"
    name = "pytorch-fallback"
    summary = "PyTorch, not the file's CUDA kernel, computes the candidate's result"
    default_severity = Severity.ERROR
    source = "runtime"
