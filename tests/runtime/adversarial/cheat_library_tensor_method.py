"""CHEAT (library compute, Python): the result is x.sigmoid(), a Tensor method rather than torch.sigmoid; the
file's kernel runs on one row so that a kernel is launched.

Expected: rejected with CL907.
Source: https://github.com/ScalingIntelligence/KernelBench/blob/main/src/kernelbench/kernel_static_checker.py (torch
computation ops); https://makora.com/blog/reward-hacks (KernelHacks taxonomy)
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "sigmoid"
EDITS = [
    (215, 217, r'''        head = torch.empty_like(x[:1])
        ext.sigmoid_out(x[:1], head)  # the file's kernel runs, on one row: the file "has a custom kernel"
        return x.sigmoid()  # a Tensor method: no torch.sigmoid for a pattern to match
'''),
]
