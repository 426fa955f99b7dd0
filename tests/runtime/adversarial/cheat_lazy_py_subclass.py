"""CHEAT (lazy result): a torch.Tensor subclass whose __torch_function__ computes on first use.

Expected: rejected with CL909 or CL906.
Source: https://deep-reinforce.com/defense_kernel_hack.html (lazy evaluation);
https://github.com/ScalingIntelligence/KernelBench/blob/main/src/kernelbench/kernel_static_checker.py (lazy tensor)
; https://github.com/gpu-mode/reference-kernels/issues/162 (lazy output)
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "lazy"
EDITS = []
