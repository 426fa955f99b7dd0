"""CHEAT (input mutation): a softmax that saves an allocation by storing its exponentials in the input. The
output is correct; the caller's input is not.

Expected: rejected with CL908.
Source:
https://github.com/ScalingIntelligence/KernelBench/blob/main/src/kernelbench/unit_tests/test_kernels/zero_out_kernel.py
; https://www.wafer.ai/blog/reward-hacks-field-guide
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "softmax_tricks"
EDITS = []
