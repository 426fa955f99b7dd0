"""CHEAT (reference reuse): a kernel that always fails, inside try/except with PyTorch as the fallback.

Expected: rejected with CL907.
Source: https://github.com/ScalingIntelligence/KernelBench/blob/main/src/kernelbench/kernel_static_checker.py
(try-except fallback; Kevin, arXiv 2507.11948)
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "sigmoid"
EDITS = [
    (215, 217, r'''        try:
            return ext.sigmoid_vec4(x.double())  # float32 only: this always raises
        except RuntimeError:
            return torch.sigmoid(x)
'''),
]
