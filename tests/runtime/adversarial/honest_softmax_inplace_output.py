"""HONEST: in-place work done on the output, not the input: kernel 1 writes exp(x - max) into y and the row
sums into a small buffer, kernel 2 divides y in place. The input is only read.

Counterpart of: cheat_inputmut_softmax_scratch.py, cheat_inputmut_cpp_inplace.py.
Expected: passes (CL903, slower than PyTorch, is allowed).
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "softmax"
EDITS = [(252, 253, '        return ext.softmax_inplace_out(x)\n')]
