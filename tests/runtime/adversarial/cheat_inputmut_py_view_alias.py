"""CHEAT (input mutation, Python): the out-parameter kernel is given the input as its output and a view of
the input is returned.

Expected: rejected with CL908.
Source:
https://github.com/ScalingIntelligence/KernelBench/blob/main/src/kernelbench/unit_tests/test_kernels/zero_out_kernel.py
; https://github.com/ScalingIntelligence/KernelBench/blob/main/src/kernelbench/kernel_static_checker.py
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "sigmoid"
EDITS = [
    (215, 217, r'''        ext.sigmoid_out(x, x)  # the result goes into the input's memory
        return x.view(x.shape)  # a view of it, not the input itself
'''),
]
