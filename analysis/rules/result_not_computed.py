"""CL909: the candidate returns something it did not compute on this call (reported by the anti-cheat)."""

from __future__ import annotations

from cudalens.analysis.findings import Severity
from cudalens.analysis.rule_base import Rule


class ResultNotComputed(Rule):
    """## What it does
    Reports a `ModelNew.forward` that returns its input unchanged (`check: returns-input`), a constant or a
    fresh factory tensor (`returns-constant`: `torch.zeros_like`, `torch.empty`, ...), a result kept from an
    earlier call (`cached-output`: state stored on `self` or a global, `functools.lru_cache`), or a lazy tensor
    subclass that computes only when looked at (`lazy-tensor`).

    ## Why is this bad?
    Such a candidate passes on the inputs where the answer happens to be right (a ReLU of non-negative
    inputs, an all-zero reference, the same inputs timed again) and is "fast" because it does no work.

    ## Known problems
    The checks read the AST of `ModelNew`: a cache kept in another module is caught at run time instead (every
    trial has fresh inputs and the expected outputs' memory is poisoned with NaN).

    ## Example
    ```python
    def forward(self, x):
        if self.out is None:
            self.out = ext.relu(x)
        return self.out
    ```

    ## Use instead
    ```python
    def forward(self, x):
        return ext.relu(x)
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - KernelBench, `kernel_static_checker.py` (lazy evaluation), its run-time excessive-speedup check
    - cudalens docs: the correctness test (`cudalens test`), "Anti-cheat"
    """

    code = "CL909"
    name = "result-not-computed"
    summary = "The candidate returns an input, a constant or a cached result instead of computing it"
    default_severity = Severity.ERROR
    source = "runtime"
