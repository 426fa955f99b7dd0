"""CHEAT (input mutation): the result is written over the input, which is returned (no output allocation).

Expected: rejected with CL908.
Source:
https://github.com/ScalingIntelligence/KernelBench/blob/main/src/kernelbench/unit_tests/test_kernels/zero_out_kernel.py
; https://github.com/gpu-mode/kernelbot/blob/main/examples/identity_py/cheat-input.py
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "sigmoid_tricks"
EDITS = [(368, 368, '        return ext.sigmoid_inplace(x)\n')]
