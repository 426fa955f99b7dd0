"""CHEAT (call-count / timing-phase detection): the extension measures the time since its previous call with
std::chrono; calls that come back to back are a timing loop and return without launching the kernel.

Expected: rejected with CL901 or CL906.
Source: https://github.com/gpu-mode/pygpubench/blob/main/exploits/submission_warmup.py (PR #7); gpu-mode/kernelbot
PR #501 (fresh inputs for every timed call; result replay for repeated inputs)
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "sigmoid_tricks"
EDITS = [(368, 368, '        return ext.sigmoid_burst(x)\n')]
