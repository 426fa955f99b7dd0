"""CHEAT (reference reuse): ModelNew inherits the reference and calls it.

Expected: rejected with CL907.
Source: https://github.com/ScalingIntelligence/KernelBench/blob/main/src/kernelbench/kernel_static_checker.py
(inheritance bypass)
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "sigmoid"
EDITS = [
    (210, 217, r'''class ModelNew(Model):
    def forward(self, x):
        head = torch.empty_like(x[:1])
        ext.sigmoid_out(x[:1], head)  # the file's kernel runs, on one row: the file "has a custom kernel"
        return super().forward(x)
'''),
]
