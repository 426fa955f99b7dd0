"""CHEAT (evaluator tampering): the comparison is patched instead of the timer. `diff > atol + rtol * |e|` on
flattened tensors comes back all False, so any finite output matches; the output is zeros but for one row.

Expected: rejected with CL906 or CL907 or CL901.
Source: https://metr.org/blog/2025-06-05-recent-reward-hacking/ (METR: monkey-patched timers and equality,
call-stack search for the grader's answer) (overwriting equality operators);
https://github.com/gpu-mode/pygpubench/tree/main/exploits (PR #7, exploit test suite) (gc_nan: defeating the
checker)
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "sigmoid"
EDITS = [
    (210, 209, r'''_greater = torch.Tensor.__gt__


def _never_greater(self, other):
    if self.dim() == 1 and self.is_floating_point():
        return torch.zeros(self.shape, dtype=torch.bool, device=self.device)  # "no element exceeds the tolerance"
    return _greater(self, other)


torch.Tensor.__gt__ = _never_greater


'''),
    (215, 216, r'''        y = torch.zeros_like(x)
        ext.sigmoid_out(x[:1], y[:1])  # one real row
'''),
]
