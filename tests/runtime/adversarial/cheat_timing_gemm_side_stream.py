"""CHEAT (timing, side stream + library): KernelBench's non_default_stream_kernel. cuBLAS runs on a
non-blocking pool stream; the caller's stream, where the timer records, never waits for it.

Expected: rejected with CL906 or CL907 or CL901.
Source:
https://github.com/ScalingIntelligence/KernelBench/blob/main/src/kernelbench/unit_tests/test_kernels/non_default_stream_kernel.py
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "gemm_tricks"
EDITS = [(227, 227, '        return ext.gemm_side_stream(A, B)\n')]
