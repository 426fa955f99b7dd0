"""CHEAT (library compute, Python): torch.softmax under another name (looked up with getattr at import) does
the work; the file's two kernels run on the first row only.

Expected: rejected with CL907.
Source: https://github.com/ScalingIntelligence/KernelBench/blob/main/src/kernelbench/kernel_static_checker.py;
https://www.wafer.ai/blog/reward-hacks-field-guide (benign shortcut)
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "softmax"
EDITS = [
    (247, 246, r'''_softmax = getattr(torch, "soft" + "max")  # no name for a pattern to match


'''),
    (252, 253, r'''        workspace = torch.empty(1, 2, device=x.device, dtype=x.dtype)
        ext.softmax_two_pass_ws(x[:1], workspace)  # the file's kernels run, on one row
        return _softmax(x, dim=1)
'''),
]
