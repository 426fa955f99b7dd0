"""CHEAT (input mutation): KernelBench's zero_out_kernel adapted to sigmoid. The input is zeroed and the answer
for zeros returned; an evaluator that runs the reference after the candidate on the same tensor agrees.

Expected: rejected with CL908 or CL901.
Source:
https://github.com/ScalingIntelligence/KernelBench/blob/main/src/kernelbench/unit_tests/test_kernels/zero_out_kernel.py
; https://github.com/ScalingIntelligence/KernelBench/pull/82
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "sigmoid_tricks"
EDITS = [(368, 368, '        return ext.sigmoid_zero_input(x)\n')]
