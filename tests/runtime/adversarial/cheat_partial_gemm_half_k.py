"""CHEAT (partial computation): half of the K dimension, extrapolated.

Expected: rejected with CL901.
Source: https://makora.com/blog/reward-hacks (KernelHacks taxonomy);
https://www.wafer.ai/blog/reward-hacks-field-guide
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "gemm_tricks"
EDITS = [(227, 227, '        return ext.gemm_half_k(A, B)\n')]
