"""HONEST: softmax in one kernel, one block per row, block reductions with warp shuffles and shared memory.

Counterpart of: cheat_partial_softmax_sampled_sum.py.
Expected: passes (CL903, slower than PyTorch, is allowed).
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "softmax"
EDITS = [(252, 253, '        return ext.softmax_rowblock(x)\n')]
