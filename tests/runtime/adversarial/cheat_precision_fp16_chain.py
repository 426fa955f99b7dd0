"""CHEAT (precision downgrade, fails tolerance): the fp32 chain computed in half precision. The output dtype is
float32; its values are off by ~1e-3 (CL901), and the source matches the fp16 pattern (CL911, a warning).

Expected: rejected with CL901 or CL911.
Source: https://github.com/ScalingIntelligence/KernelBench/blob/main/src/kernelbench/kernel_static_checker.py
(precision downgrade); https://deep-reinforce.com/defense_kernel_hack.html;
https://www.wafer.ai/blog/reward-hacks-field-guide
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "fused_chain_tricks"
EDITS = [(125, 125, '        return ext.fused_chain_half(x)\n')]
