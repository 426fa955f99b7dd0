"""CHEAT (library compute in C++): cuBLAS through at::matmul inside the extension; a one-element kernel keeps
up appearances.

Expected: rejected with CL907.
Source: https://makora.com/blog/reward-hacks (KernelHacks taxonomy) (baseline kernel);
https://github.com/ScalingIntelligence/KernelBench/blob/main/src/kernelbench/unit_tests/test_kernels/non_default_stream_kernel.py
(cuBLAS inside the extension)
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "gemm_tricks"
EDITS = []
