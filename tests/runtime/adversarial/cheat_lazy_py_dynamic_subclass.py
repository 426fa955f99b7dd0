"""CHEAT (lazy result, hidden): the subclass is created at run time with type(); nothing in the source reads
as a Tensor subclass.

Expected: rejected with CL909 or CL906.
Source: https://deep-reinforce.com/defense_kernel_hack.html (lazy evaluation);
https://github.com/gpu-mode/reference-kernels/issues/162 (lazy output)
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "lazy"
EDITS = [
    (224, 225, '_Later = type("_Later", (torch.Tensor,), {"__torch_function__": classmethod(_compute_when_read)})\n'),
    (233, 233, '        y = torch.empty_like(x).as_subclass(_Later)\n'),
]
