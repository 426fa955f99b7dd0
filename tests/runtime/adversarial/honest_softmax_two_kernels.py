"""HONEST: several kernels a call. Pass 1 writes each row's max and sum of exponentials into a workspace that
the C++ allocates on every call; pass 2 normalizes.

Counterpart of: cheat_partial_softmax_sampled_sum.py, cheat_library_softmax_getattr.py.
Expected: passes (CL903, slower than PyTorch, is allowed).
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "softmax"
EDITS = [(252, 253, '        return ext.softmax_two_pass(x)\n')]
