"""CHEAT (precision downgrade through torch's TF32 flag, in C++): the candidate's product runs on TF32 tensor
cores; the reference's stays float32. It may pass the tolerance; the work is cuBLAS's (CL907).

Expected: rejected with CL907 or CL911.
Source: https://deep-reinforce.com/defense_kernel_hack.html (precision downgrade);
https://makora.com/blog/reward-hacks (KernelHacks taxonomy)
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "gemm_tricks"
EDITS = [(227, 227, '        return ext.gemm_tf32_switch(A, B)\n')]
