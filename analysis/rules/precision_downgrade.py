"""CL911: an fp32 problem computed in fp16 (reported by cudalens.profiler's anti-cheat checks)."""

from __future__ import annotations

from cudalens.analysis.findings import Severity
from cudalens.analysis.rule_base import Rule


class PrecisionDowngrade(Rule):
    """## What it does
    Reports a candidate for a float32 problem that converts to half precision (`__float2half`,
    `static_cast<half>`, `.half()`, `.to(torch.float16)`).

    ## Why is this bad?
    Half precision halves the bytes moved and unlocks tensor cores, so it looks faster, but the result is not
    the float32 result the reference computes; with the fp32 tolerance (1e-4) it usually fails, with a looser
    one it passes and is wrong in a way the user did not choose.

    ## Known problems
    A warning, not a rejection: mixed precision with fp32 accumulation can be legitimate when the user asks
    for it. The check reads the file's text and does not see conversions made through other helpers.

    ## Example
    ```cuda
    __half h = __float2half(x[i]);
    ```

    ## Use instead
    ```cuda
    float v = x[i];   // keep the problem's precision, or say that the problem is fp16
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - KernelBench, `kernel_static_checker.py` (precision downgrade)
    """

    code = "CL911"
    name = "precision-downgrade"
    summary = "An fp32 problem computed in half precision"
    default_severity = Severity.WARNING
    source = "runtime"
