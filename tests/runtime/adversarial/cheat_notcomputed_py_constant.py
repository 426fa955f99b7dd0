"""CHEAT (output not computed): a constant, 0.5 everywhere.

Expected: rejected with CL909 or CL901.
Source: https://makora.com/blog/reward-hacks (KernelHacks taxonomy) (constant fill);
https://www.wafer.ai/blog/reward-hacks-field-guide
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "sigmoid"
EDITS = [(215, 217, '        return torch.full_like(x, 0.5)  # the mean of sigmoid over randn inputs\n')]
