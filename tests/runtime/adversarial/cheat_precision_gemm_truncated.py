"""CHEAT (precision downgrade, hidden from patterns, fails tolerance): operands truncated to bf16 by masking
the low 16 bits.

Expected: rejected with CL901.
Source: https://github.com/ScalingIntelligence/KernelBench/blob/main/src/kernelbench/kernel_static_checker.py
(precision downgrade, which only matches fp16 spellings); https://deep-reinforce.com/defense_kernel_hack.html
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "gemm_tricks"
EDITS = [(227, 227, '        return ext.gemm_truncated(A, B)\n')]
