"""CHEAT (call-count / result replay): the extension keeps its last output in a C++ static and, once the trials
are over, hands it back for every input.

Expected: rejected with CL901 or CL906 or CL909.
Source: gpu-mode/kernelbot PR #501 (fresh inputs for every timed call; result replay for repeated inputs);
https://github.com/gpu-mode/reference-kernels/issues/162 (in-process cache, replay)
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "sigmoid_tricks"
EDITS = [(368, 368, '        return ext.sigmoid_replay(x)\n')]
