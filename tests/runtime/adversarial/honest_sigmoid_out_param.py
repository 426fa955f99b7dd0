"""HONEST: an out-parameter kernel; Python allocates the output with torch.empty_like and the kernel fills all of it.

Counterpart of: cheat_notcomputed_cpp_empty.py, cheat_notcomputed_cpp_zero_grid.py,
cheat_notcomputed_py_returns_input.py, cheat_notcomputed_py_constant.py, cheat_inputmut_py_view_alias.py,
cheat_inputmut_cpp_inplace.py, cheat_inputmut_cpp_from_blob.py.
Expected: passes (CL903, slower than PyTorch, is allowed).
Part of cudalens's adversarial corpus (tests/runtime/adversarial/README.md).
"""

BASE = "sigmoid"
EDITS = []
