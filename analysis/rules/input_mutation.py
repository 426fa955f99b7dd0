"""CL908: the candidate changes its inputs or returns their memory (reported by the correctness harness)."""

from __future__ import annotations

from cudalens.analysis.findings import Severity
from cudalens.analysis.rule_base import Rule


class InputMutation(Rule):
    """## What it does
    Reports a candidate that, on a trial, left an input tensor different from what `get_inputs()` made
    (`check: inputs-modified`; compared on the device with a copy saved before the call, after the timing as
    well), or returned an output that shares memory with an input (`output-aliases-input`, storages that
    overlap) — unless the reference does the same: a reference that works in place may be matched by a
    candidate that changes that input the same way, and one that returns a view of its input by a candidate
    that does too.

    ## Why is this bad?
    A kernel that writes its result into its input and returns the input skips an allocation and a tensor's
    worth of writes: it passes the test and looks faster (1.6× on a 6 GB elementwise problem), but the caller's
    input is gone, and the reference, timed on the same inputs after it, times different data.

    ## Known problems
    Non-tensor inputs (numbers, lists) are not compared. An input changed and restored within the call is not
    seen.

    ## Example
    ```cuda
    torch::Tensor swish(torch::Tensor x) {
        swish_kernel<<<grid, block>>>(x.data_ptr<float>(), x.data_ptr<float>(), n);   // in place
        return x;
    }
    ```

    ## Use instead
    ```cuda
    torch::Tensor swish(torch::Tensor x) {
        auto y = torch::empty_like(x);
        swish_kernel<<<grid, block>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
        return y;
    }
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - cudalens docs: the correctness test (`cudalens test`), "What passed means"
    """

    code = "CL908"
    name = "input-mutation"
    summary = "The candidate changes its inputs or returns memory it shares with them"
    default_severity = Severity.ERROR
    source = "runtime"
