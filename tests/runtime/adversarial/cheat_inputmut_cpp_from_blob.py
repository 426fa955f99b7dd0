"""CHEAT (input mutation, aliasing hidden): the result goes into the input's memory and comes back as a new
tensor made with torch::from_blob; `out is x` and storage identity checks do not see it.

Expected: rejected with CL908.
Source:
https://github.com/ScalingIntelligence/KernelBench/blob/main/src/kernelbench/unit_tests/test_kernels/zero_out_kernel.py
; https://www.wafer.ai/blog/reward-hacks-field-guide (semantic attacks)
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "sigmoid_tricks"
EDITS = [(368, 368, '        return ext.sigmoid_alias(x)\n')]
