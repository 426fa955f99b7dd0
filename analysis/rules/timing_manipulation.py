"""CL906: the candidate fakes or escapes the timer (reported by cudalens.profiler's anti-cheat checks)."""

from __future__ import annotations

from cudalens.analysis.findings import Severity
from cudalens.analysis.rule_base import Rule


class TimingManipulation(Rule):
    """## What it does
    Reports a candidate that changes what the timing measures: it replaces a clock the timing trusts
    (`torch.cuda.Event` or its `record`/`elapsed_time`/`synchronize`, `torch.cuda.synchronize`,
    `torch.cuda.Stream.synchronize`, `time.perf_counter`), statically (`check: timing-patch`) or at run time
    however it spelled it (`clock-replaced`: the worker compares the clocks with the ones it kept before any
    candidate ran, and names the line that replaced one); or it does its work where the timer does not look:
    on a side stream (`side-stream`) or in threads or processes (`threads`); or its measured time is below the
    physical bound (`below-physical-bound`): the least time any correct kernel needs on this GPU, its inputs
    read once and its outputs written once through DRAM at the part's peak bandwidth, its FLOPs (as torch's
    FlopCounterMode counts the reference's) at the part's peak tensor rate. Whatever the trick, such a time
    cannot be real.

    ## Why is this bad?
    The speedup is invented: a fake `elapsed_time` reports whatever the candidate wants, and work on another
    stream or thread finishes after the stop event. In a long-lived worker a replaced clock would also fake
    every later file's timing, so the worker retires after the test.

    ## Known problems
    A clock replaced on a class (`torch.cuda.Event.elapsed_time = f`), through `__dict__` or from a C extension
    is found by comparing the clock objects; its line is then the definition of the replacement (a lambda's
    is the assignment's), or unknown (the finding sits on the kernel's name). Side streams that the kernel joins back with
    an event before returning are still reported: record the work on the current stream instead. The physical
    bound counts every input as read: a problem whose kernel may legitimately skip most of an input (a
    diagonal of a matrix) could be refused; none of KernelBench's is such a problem.

    ## Example
    ```python
    torch.cuda.Event.elapsed_time = lambda self, end: 0.001
    ```

    ## Use instead
    ```python
    # leave torch's clocks alone; launch on torch.cuda.current_stream()
    ```

    ## Fix safety
    No automatic fix.

    ## References
    - KernelBench, `kernel_static_checker.py` (timing monkey-patches, stream and thread injection)
    - cudalens docs: the correctness test (`cudalens test`), "Anti-cheat"
    """

    code = "CL906"
    name = "timing-manipulation"
    summary = "The candidate replaces a clock the timing trusts, works outside the timed stream, or times impossibly"
    default_severity = Severity.ERROR
    source = "runtime"
