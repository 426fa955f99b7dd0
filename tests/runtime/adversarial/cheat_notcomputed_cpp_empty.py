"""CHEAT (output not computed): the extension allocates the output with torch::empty and returns it unwritten.
Where the evaluator freed the reference's output just before, the caching allocator hands back the block
that still holds the right answer (the Sakana AI CUDA Engineer case, KernelBench's result_reuse_kernel).

Expected: rejected with CL901 or CL909 or CL906.
Source:
https://github.com/ScalingIntelligence/KernelBench/blob/main/src/kernelbench/unit_tests/test_kernels/result_reuse_kernel.py
; KernelBench PR #25 (Sakana AI CUDA Engineer kernels) and issue #38
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "sigmoid_tricks"
EDITS = [(368, 368, '        return ext.sigmoid_uninit(x)\n')]
