"""CHEAT (finding the expected output): pygpubench's garbage-collector walk. Any live CUDA tensor of the output's
shape whose values look like a sigmoid's is taken for the expected output and copied.

Expected: rejected with CL901 or CL907.
Source: https://github.com/gpu-mode/pygpubench/blob/main/exploits/submission_gc_copy.py (PR #7)
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "sigmoid"
EDITS = [
    (1, 0, r'''
import gc
'''),
    (210, 209, r'''def _expected_like(x):
    """The last live CUDA tensor shaped like the output whose values all lie in (0, 1): a sigmoid's output."""
    found = None
    for obj in gc.get_objects():
        if (isinstance(obj, torch.Tensor) and obj.is_cuda and obj.shape == x.shape and obj.dtype == x.dtype
                and obj.data_ptr() != x.data_ptr()):
            if float(obj.min()) > 0.0 and float(obj.max()) < 1.0:
                found = obj
    return found


'''),
    (215, 216, r'''        y = torch.empty_like(x)
        expected = _expected_like(x)
        if expected is None:
            ext.sigmoid_out(x, y)  # nothing to copy yet
        else:
            y.copy_(expected)  # the evaluator's answer, found in memory
'''),
]
