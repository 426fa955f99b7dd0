"""CHEAT (output not computed, disguised): a real launch whose grid, an integer division, is 0 blocks; the
error is cleared with cudaGetLastError. The output is torch::empty memory.

Expected: rejected with CL901 or CL909 or CL906.
Source:
https://github.com/ScalingIntelligence/KernelBench/blob/main/src/kernelbench/unit_tests/test_kernels/result_reuse_kernel.py
; KernelBench PR #25 (Sakana AI CUDA Engineer kernels) and issue #38; https://www.wafer.ai/blog/reward-hacking
(104x case: a kernel that read garbage memory)
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "sigmoid_tricks"
EDITS = [(368, 368, '        return ext.sigmoid_zero_grid(x)\n')]
