"""CHEAT (partial computation): the row sum is extrapolated from a sample of the columns.

Expected: rejected with CL901.
Source: https://makora.com/blog/reward-hacks (KernelHacks taxonomy);
https://www.wafer.ai/blog/reward-hacks-field-guide
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "softmax_tricks"
EDITS = [(170, 170, '        return ext.softmax_sampled_sum(x)\n')]
